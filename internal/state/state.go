// Package state keeps the lab inventory on disk: <home>/labs/<name>/lab.json,
// written atomically before anything is created so that `down` can always
// find what an interrupted `up` may have left.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
)

// Lab statuses.
const (
	Creating = "creating" // up in progress (or interrupted)
	Running  = "running"
	Stopped  = "stopped"
	Failed   = "failed"
)

// Lab is what lab.json holds.
type Lab struct {
	Version int        `json:"version"`
	Status  string     `json:"status"`
	Created time.Time  `json:"created"`
	Updated time.Time  `json:"updated"`
	Plan    *plan.Plan `json:"plan"`
	// Inventory is where a lab of remote hosts (plan mode ssh) runs: each
	// host's machine and how to reach it.
	Inventory *inventory.Resolved `json:"inventory,omitempty"`
	// Primaries is where labs of earlier versions kept each primary
	// cluster's current primary; Load moves it to roles.json (RoleFile).
	Primaries map[string]string `json:"primaries,omitempty"`
}

// Home resolves the hadrill home: flag, then $HADRILL_HOME, then ~/.hadrill.
func Home(flag string) (string, error) {
	what, dir := "--home", flag
	if dir == "" {
		what, dir = "HADRILL_HOME", os.Getenv("HADRILL_HOME")
	}
	if dir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", hderr.User("--home: not given, HADRILL_HOME is not set, and there is no home directory to hold ~/.hadrill (%v): set one of them", err)
		}
		what, dir = "~/.hadrill", filepath.Join(h, ".hadrill")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", hderr.User("%s: %v", what, err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return "", hderr.User("%s: %s is a file, expected hadrill's home directory", what, abs)
	}
	return abs, nil
}

// LabDir is where a lab lives.
func LabDir(home, name string) string { return filepath.Join(home, "labs", name) }

func file(home, name string) string { return filepath.Join(LabDir(home, name), "lab.json") }

// Save writes lab.json atomically.
func Save(home string, l *Lab) error {
	l.Version = 1
	l.Updated = time.Now().UTC()
	if l.Created.IsZero() {
		l.Created = l.Updated
	}
	dir := LabDir(home, l.Plan.Lab)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp := file(home, l.Plan.Lab) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file(home, l.Plan.Lab))
}

// Load reads a lab; a missing lab is a user error naming the known ones.
func Load(home, name string) (*Lab, error) {
	b, err := os.ReadFile(file(home, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, hderr.User("--name: no lab %q in %s (labs: %s)", name, home, listOrNone(home))
	}
	if err != nil {
		return nil, err
	}
	var l Lab
	if err := json.Unmarshal(b, &l); err != nil || l.Plan == nil {
		return nil, fmt.Errorf("lab %q: %s is damaged: %v", name, file(home, name), err)
	}
	plan.Complete(l.Plan)
	if len(l.Primaries) > 0 {
		if err := migratePrimaries(&l); err != nil {
			return nil, err
		}
	}
	return &l, nil
}

// List returns the names of all labs in home, sorted.
func List(home string) []string {
	entries, _ := os.ReadDir(filepath.Join(home, "labs"))
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func listOrNone(home string) string {
	l := List(home)
	if len(l) == 0 {
		return "none"
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// Resolve picks the lab a command acts on: the given name, or the only lab.
func Resolve(home, name string) (string, error) {
	if name != "" {
		return name, nil
	}
	labs := List(home)
	switch len(labs) {
	case 1:
		return labs[0], nil
	case 0:
		return "", hderr.User("no lab in %s: start one with `hadrill up`", home)
	}
	return "", hderr.User("--name: %d labs exist (%s); say which one", len(labs), listOrNone(home))
}

// migratePrimaries moves the primaries an earlier version kept in lab.json
// into roles.json (unless that exists already), so that lab.json, which
// commands re-save, never holds them again.
func migratePrimaries(l *Lab) error {
	f := RolesOf(l.Plan.Dir)
	r, err := f.Read()
	if err != nil {
		return err
	}
	if len(r.Primaries) == 0 {
		if err := f.Update(func(r *Roles) { r.Primaries = l.Primaries }); err != nil {
			return err
		}
	}
	l.Primaries = nil
	return nil
}
