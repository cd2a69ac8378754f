package decide

import (
	"reflect"
	"slices"
	"testing"
)

type section struct {
	A int     `yaml:"a"`
	B *string `yaml:"b,omitempty"`
	C bool    `yaml:"c"`
	D float64 `yaml:"-"`
}

// embedding has section's fields inline, as the scenario's Clients has
// its Policies.
type embedding struct {
	section `yaml:",inline"`
	E       int `yaml:"e"`
}

// The fields of an inline section are the embedding section's own: each
// is decided and refused by its name, not skipped.
func TestInlineSections(t *testing.T) {
	s := "x"
	tab := Table{"a": Live, "b": Refused, "c": Live, "e": Live}
	if got, want := tab.Refused("s", embedding{section: section{A: 1, B: &s}, E: 2}), []string{"s.b"}; !slices.Equal(got, want) {
		t.Errorf("Refused: got %v, want %v", got, want)
	}
	missing, extra := Table{"a": Live, "e": Live}.Undecided(reflect.TypeFor[embedding]())
	if !slices.Equal(missing, []string{"b", "c"}) || len(extra) != 0 {
		t.Errorf("Undecided: got missing %v, extra %v; want [b c] and none", missing, extra)
	}
}

func TestRefused(t *testing.T) {
	tab := Table{"a": Live, "b": Refused}
	s := "x"
	for _, tt := range []struct {
		v    section
		want []string
	}{
		{section{}, nil},
		{section{A: 3, D: 1}, nil},                              // live, and a field without a YAML name
		{section{B: &s}, []string{"s.b"}},                       // refused, set
		{section{A: 1, B: &s, C: true}, []string{"s.b", "s.c"}}, // c has no decision: refused
	} {
		if got := tab.Refused("s", tt.v); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestUndecided(t *testing.T) {
	missing, extra := Table{"a": Live, "b": Inert, "gone": Refused, "also": Live}.Undecided(reflect.TypeFor[section]())
	if !slices.Equal(missing, []string{"c"}) || !slices.Equal(extra, []string{"also", "gone"}) {
		t.Errorf("missing %v, extra %v; want [c] and [also gone]", missing, extra)
	}
}

func TestChanged(t *testing.T) {
	tab := Table{"a": Live, "b": Refused}
	x, y := "x", "y"
	def := section{A: 1, B: &x, C: true}
	for _, tt := range []struct {
		v    section
		want []string
	}{
		{def, nil},                           // the defaults: nothing named, c included
		{section{A: 2, B: &x, C: true}, nil}, // live, changed
		{section{A: 1, B: &y, C: true}, []string{"s.b"}}, // refused, changed
		{section{A: 1, B: &x}, []string{"s.c"}},          // no decision, changed from true to false
	} {
		if got := tab.Changed("s", tt.v, def); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: got %v, want %v", tt.v, got, tt.want)
		}
	}
}
