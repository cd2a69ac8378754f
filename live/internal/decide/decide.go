// Package decide holds live mode's decision for every field of a scenario
// section it reads: run live, inert (no effect in what live mode can run),
// or refused. A table per section, checked by Refused at run time and by
// Undecided in tests, so that a field added to the scenario is refused
// live until someone decides, never silently ignored.
package decide

import (
	"reflect"
	"slices"
	"strings"
)

// Decision is what live mode does with one field.
type Decision int

const (
	Live    Decision = iota // implemented live
	Inert                   // has no effect in what live mode runs, here as in the simulator
	Refused                 // refused when set to anything but its zero value
)

// Table is a section's decisions, by the fields' YAML names.
type Table map[string]Decision

func fieldName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// inline reports whether f is an embedded section whose fields are the
// section's own (yaml ",inline"), as the scenario's Policies in Clients.
func inline(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return f.Anonymous && opts == "inline" && f.Type.Kind() == reflect.Struct
}

// Refused names, as section.name, the fields of the struct v that are set
// and that t refuses or has no decision for.
func (t Table) Refused(section string, v any) []string {
	var out []string
	var walk func(rv reflect.Value)
	walk = func(rv reflect.Value) {
		for i := range rv.NumField() {
			f := rv.Type().Field(i)
			if inline(f) {
				walk(rv.Field(i))
				continue
			}
			name := fieldName(f)
			if name == "" {
				continue
			}
			if d, ok := t[name]; (!ok || d == Refused) && !rv.Field(i).IsZero() {
				out = append(out, section+"."+name)
			}
		}
	}
	walk(reflect.ValueOf(v))
	return out
}

// Changed names, as section.name, the fields of the struct v that differ
// from their value in def (a value of the same type: the section's
// defaults) and that t refuses or has no decision for.
func (t Table) Changed(section string, v, def any) []string {
	rv, rd := reflect.ValueOf(v), reflect.ValueOf(def)
	var out []string
	for i := range rv.NumField() {
		name := fieldName(rv.Type().Field(i))
		if name == "" {
			continue
		}
		if d, ok := t[name]; (!ok || d == Refused) && !reflect.DeepEqual(rv.Field(i).Interface(), rd.Field(i).Interface()) {
			out = append(out, section+"."+name)
		}
	}
	return out
}

// Undecided lists the fields of struct type typ that t has no decision
// for, and the names in t that are no field of typ, each sorted.
func (t Table) Undecided(typ reflect.Type) (missing, extra []string) {
	seen := map[string]bool{}
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if inline(f) {
				walk(f.Type)
				continue
			}
			name := fieldName(f)
			if name == "" {
				continue
			}
			seen[name] = true
			if _, ok := t[name]; !ok {
				missing = append(missing, name)
			}
		}
	}
	walk(typ)
	for name := range t {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	return missing, extra
}
