package catalog

import (
	"embed"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/hderr"
)

//go:embed testdata/docs/*.yaml
var docs embed.FS

func TestCatalog(t *testing.T) {
	c := Catalog{FS: docs, Dir: "testdata/docs", Field: "--doc", What: "document", Else: "; or a file"}
	if got := strings.Join(c.Names(), ","); got != "a,b" {
		t.Errorf("names %s", got)
	}
	if b, err := c.Source("b"); err != nil || string(b) != "name: b\n" {
		t.Errorf("b: %q %v", b, err)
	}
	_, err := c.Source("z")
	if !hderr.IsUser(err) || err.Error() != `--doc: unknown document "z" (known: a, b; or a file)` {
		t.Errorf("unknown: %v", err)
	}
}
