package spec

import "sort"

// lookup finds the entry named name: in the spec's own list first, then in
// the built-in one (a spec's entry shadows a built-in one of its name).
func lookup[T any](name string, key func(T) string, own, builtin []T) (T, bool) {
	for _, list := range [][]T{own, builtin} {
		for _, e := range list {
			if key(e) == name {
				return e, true
			}
		}
	}
	var zero T
	return zero, false
}

// namesOf lists every name a spec may use from its own and the built-in
// list, once each, sorted.
func namesOf[T any](key func(T) string, own, builtin []T) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]T{own, builtin} {
		for _, e := range list {
			if n := key(e); !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func machineName(m Machine) string { return m.Name }
func diskName(d DiskClass) string  { return d.Name }
