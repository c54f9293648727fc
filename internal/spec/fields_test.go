package spec

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestFieldsLoadBack: a spec as Fields prints it (JSON, which is YAML)
// loads back as the same spec, for every preset; its keys are the file's.
func TestFieldsLoadBack(t *testing.T) {
	for _, name := range PresetNames() {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Fields(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := f["clusters"]; !ok {
			t.Errorf("%s: no clusters key in %v", name, f)
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := Load(b)
		if err != nil {
			t.Fatalf("%s: what Fields printed does not load: %v\n%s", name, err, b)
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("%s: loaded back as\n%+v\nnot\n%+v", name, back, s)
		}
	}
}
