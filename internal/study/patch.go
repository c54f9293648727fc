package study

import (
	"go.yaml.in/yaml/v3"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// Spec is the variant's topology: its preset with the patch merged in,
// loaded and validated as any spec.
func (v Variant) Spec() (*spec.Spec, error) {
	src, err := spec.PresetSource(v.Preset)
	if err != nil {
		return nil, hderr.User("preset: unknown preset %q (known: %s)", v.Preset, strings.Join(spec.PresetNames(), ", "))
	}
	var base map[string]any
	if err := yaml.Unmarshal(src, &base); err != nil {
		return nil, err
	}
	merged, err := yaml.Marshal(Merge(base, v.Patch))
	if err != nil {
		return nil, err
	}
	s, err := spec.Load(merged)
	if err != nil {
		if u, ok := err.(*hderr.UserError); ok { // the patch's fields, named as such
			var probs []string
			for _, p := range u.Problems {
				probs = append(probs, "patch."+p)
			}
			return nil, hderr.Users(probs)
		}
		return nil, err
	}
	return s, nil
}

// Merge merges patch into base (neither is changed): maps key by key,
// lists whose items all have a name item by item (by name; new names are
// appended), null removing a key, anything else replaced by the patch's
// value.
func Merge(base, patch map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, pv := range patch {
		if pv == nil { // null removes the key
			delete(out, k)
			continue
		}
		out[k] = mergeValue(out[k], pv)
	}
	return out
}

func mergeValue(base, patch any) any {
	switch p := patch.(type) {
	case map[string]any:
		if b, ok := base.(map[string]any); ok {
			return Merge(b, p)
		}
	case []any:
		if b, ok := base.([]any); ok && named(b) && named(p) {
			out := append([]any(nil), b...)
			for _, item := range p {
				pm := item.(map[string]any)
				found := false
				for i, bi := range out {
					if bm := bi.(map[string]any); bm["name"] == pm["name"] {
						out[i], found = Merge(bm, pm), true
					}
				}
				if !found {
					out = append(out, pm)
				}
			}
			return out
		}
	}
	return patch
}

// named reports whether every item of a list is a map with a name.
func named(l []any) bool {
	for _, item := range l {
		m, ok := item.(map[string]any)
		if !ok || m["name"] == nil {
			return false
		}
	}
	return len(l) > 0
}
