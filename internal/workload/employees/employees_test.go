package employees

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
)

// The statements are the dataset: a change to them changes every
// measurement over it, so they are pinned.
func TestStatementsGolden(t *testing.T) {
	golden.Check(t, "size-0.1.sql", []byte(strings.Join(Statements(0.1), ";\n")+";\n"))
}

func TestShape(t *testing.T) {
	if n := Employees(1); n != FullEmployees {
		t.Errorf("size 1: %d employees", n)
	}
	if r := Rows(1); r < 3_800_000 || r > 4_100_000 {
		t.Errorf("size 1: %d rows, want about 3.9 million", r)
	}
	s := Statements(1)
	if !strings.HasPrefix(s[0], "CREATE DATABASE") || !strings.Contains(s[len(s)-1], Marker) {
		t.Errorf("the schema first, the marker last: %q … %q", s[0], s[len(s)-1])
	}
	chunks := 0
	for _, x := range s {
		if strings.HasPrefix(x, "INSERT INTO employees.employees") {
			chunks++
		}
	}
	if want := (FullEmployees + Chunk - 1) / Chunk; chunks != want {
		t.Errorf("%d chunks of employees, want %d", chunks, want)
	}
}
