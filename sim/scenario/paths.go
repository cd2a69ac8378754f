package scenario

import "reflect"

// FieldPaths lists the YAML path of every field of a scenario that --set
// can override, in declaration order: "clients.throttle.k", and for lists
// the first element's ("faults.0.start"); a service has the backend's
// fields, which it embeds inline ("services.0.workers"). A struct field is
// listed as well as its fields (a whole block can be set:
// clients.throttle=null). The sweep block is left out: --set applies to
// the scenario, not its sweep. Shell completion offers these after --set
// and --vary.
func FieldPaths() []string {
	var out []string
	var walk func(t reflect.Type, prefix string, depth int)
	walk = func(t reflect.Type, prefix string, depth int) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if depth > 8 || t.Kind() != reflect.Struct {
			return
		}
		fields, names := yamlFields(t) // the decoder's table: ",inline" sections' fields too
		for _, name := range names {
			f := t.FieldByIndex(fields[name])
			if !f.IsExported() || (depth == 0 && name == "sweep") {
				continue
			}
			path := prefix + name
			out = append(out, path)
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), path+".0.", depth+1)
			case ft.Kind() == reflect.Struct && !isScalar(ft):
				walk(ft, path+".", depth+1)
			}
		}
	}
	walk(reflect.TypeFor[Scenario](), "", 0)
	return out
}

// isScalar: types written as one YAML scalar (a duration, a rate).
func isScalar(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[scalarUnmarshaler]())
}
