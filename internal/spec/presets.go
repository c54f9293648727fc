package spec

import (
	"embed"
	"path"
	"sort"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// DefaultPreset is used when neither a preset nor a file is given.
const DefaultPreset = "galera3"

// PresetNames lists the embedded presets, sorted.
func PresetNames() []string {
	entries, _ := presetFS.ReadDir("presets")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// PresetSource returns the YAML text of a preset.
func PresetSource(name string) ([]byte, error) {
	data, err := presetFS.ReadFile(path.Join("presets", name+".yaml"))
	if err != nil {
		return nil, hderr.User("--preset: unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return data, nil
}

// Preset loads, defaults and validates a preset.
func Preset(name string) (*Spec, error) {
	data, err := PresetSource(name)
	if err != nil {
		return nil, err
	}
	return Load(data)
}
