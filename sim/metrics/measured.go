package metrics

import (
	"reflect"
	"strings"
)

// ServerFields are the JSON names of Summary's fields counted at the
// server (tagged measured:"server"), in the order of the struct: what a
// client that cannot see the server (live mode against --target) does not
// measure.
func ServerFields() []string {
	t := reflect.TypeFor[Summary]()
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("measured") == "server" {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}

// ForgetServer clears the server's fields (ServerFields): counts to 0,
// figures to nil, so that none reads as measured.
func (s *Summary) ForgetServer() {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("measured") == "server" {
			v.Field(i).SetZero()
		}
	}
}
