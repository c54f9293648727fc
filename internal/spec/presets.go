package spec

import (
	"embed"

	"github.com/hadrill/hadrill/internal/catalog"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// DefaultPreset is used when neither a preset nor a file is given.
const DefaultPreset = "galera3"

var presets = catalog.Catalog{FS: presetFS, Dir: "presets", Field: "--preset", What: "preset"}

// PresetNames lists the embedded presets, sorted.
func PresetNames() []string { return presets.Names() }

// PresetSource returns the YAML text of a preset.
func PresetSource(name string) ([]byte, error) { return presets.Source(name) }

// Preset loads, defaults and validates a preset.
func Preset(name string) (*Spec, error) {
	data, err := PresetSource(name)
	if err != nil {
		return nil, err
	}
	return Load(data)
}
