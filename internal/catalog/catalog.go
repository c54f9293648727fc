// Package catalog reads a set of YAML documents embedded in the binary
// under one directory (the presets, the studies): their names and each
// one's text, an unknown name refused as bad input naming the known ones.
package catalog

import (
	"embed"
	"path"
	"sort"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
)

// Catalog is the documents NAME.yaml in FS's directory Dir.
type Catalog struct {
	FS  embed.FS
	Dir string
	// Field names the argument or flag that names a document ("--preset");
	// What is what a document is ("preset"); Else is what else the user
	// may give ("; or give a file with --file").
	Field, What, Else string
}

// Names lists the documents, sorted.
func (c Catalog) Names() []string {
	entries, _ := c.FS.ReadDir(c.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Source is a document's text.
func (c Catalog) Source(name string) ([]byte, error) {
	b, err := c.FS.ReadFile(path.Join(c.Dir, name+".yaml"))
	if err != nil {
		return nil, hderr.User("%s: unknown %s %q (known: %s%s)", c.Field, c.What, name, strings.Join(c.Names(), ", "), c.Else)
	}
	return b, nil
}
