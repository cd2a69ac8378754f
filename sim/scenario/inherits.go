package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"
)

// A group's timeout and deadline are the fleet's unless the group gives
// them, and a group may give 0 (no timeout). Group embeds Policies, whose
// Timeout and Deadline are plain durations (the fleet's and a call's are
// always given), so whether a group gives them is recorded beside the
// values, in Group.given, by whoever reads the group: the decoder (from
// YAML and --set) and UnmarshalJSON (summary.json). Everything else reads
// the record through one method, givenFlag, and treats such a field as it
// once treated a field of pointer type:
//
//   - the decoder: null or ~ leaves it unset; a value, or nothing after
//     the key ("timeout:"), gives it (the zero value);
//   - the JSON Schema: it may be null;
//   - JSON (summary.json, run keys): written as null while unset;
//   - ResolvedGroups: unset, it is the fleet's.

// givenFields records which of a group's inherited fields it gives.
type givenFields struct{ timeout, deadline bool }

// inheritor is a section with fields that may be left unset, to be taken
// from elsewhere (Group).
type inheritor interface {
	// givenFlag is the record of whether the field with YAML name name is
	// given, or nil for a field that is always given.
	givenFlag(name string) *bool
}

func (g *Group) givenFlag(name string) *bool {
	switch name {
	case "timeout":
		return &g.given.timeout
	case "deadline":
		return &g.given.deadline
	}
	return nil
}

// Inherited reports whether the field with YAML (and JSON) name name of
// struct type t may be left unset, to be taken from elsewhere, and is then
// written as null in JSON: a client group's timeout and deadline. Schemas
// of the JSON (docs/summary.schema.json) let such a field be null.
func Inherited(t reflect.Type, name string) bool {
	in, ok := reflect.New(t).Interface().(inheritor)
	return ok && in.givenFlag(name) != nil
}

// resolved is the group's policy stack: its own, with the fleet's timeout
// and deadline where it gives none.
func (g *Group) resolved(fleet Policies) Policies {
	p := g.Policies
	if !g.given.timeout {
		p.Timeout = fleet.Timeout
	}
	if !g.given.deadline {
		p.Deadline = fleet.Deadline
	}
	return p
}

// decodeInherited decodes the value n of a field that may be left unset
// exactly as the field of pointer type it stands for, and records whether
// it is given.
func (d *decoder) decodeInherited(n *yaml.Node, v reflect.Value, path, enum string, given *bool) {
	p := reflect.New(reflect.PointerTo(v.Type())).Elem() // a nil pointer: not given
	d.decode(n, p, path, enum)
	*given = !p.IsNil()
	if p.IsNil() {
		v.SetZero()
	} else {
		v.Set(p.Elem())
	}
}

// MarshalJSON writes the group as encoding/json writes its fields, with
// null for a timeout or deadline it does not give.
func (g Group) MarshalJSON() ([]byte, error) {
	type plain Group // the fields, without these methods
	b, err := json.Marshal(plain(g))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if f := g.givenFlag(key); f != nil && !*f {
			raw = json.RawMessage("null")
		}
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(raw)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes: a timeout or deadline that
// is absent or null is not given.
func (g *Group) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("scenario: a client group: %w", err)
	}
	idx, names := yamlFields(reflect.TypeFor[Group]())
	for _, name := range names {
		if f := g.givenFlag(name); f != nil {
			raw, ok := fields[name]
			*f = ok && string(raw) != "null"
			if !*f {
				delete(fields, name)
				reflect.ValueOf(g).Elem().FieldByIndex(idx[name]).SetZero()
			}
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	type plain Group
	return json.Unmarshal(rest, (*plain)(g))
}
