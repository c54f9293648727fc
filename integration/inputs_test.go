package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputOddities (the inputs review's L6, L8, L9, L10): presets listed
// and shown as JSON, an unknown one named as NAME; no home at all refused as
// bad input; a study file past its size refused before it is read; check's
// JSON of a valid history says empty lists, not null.
func TestInputOddities(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if r := e.run("presets", "show", "nope"); r.code != 2 || !strings.Contains(r.stderr, `NAME: unknown preset "nope" (known: async,`) {
		t.Errorf("presets show nope: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("presets", "list"); r.code != 0 || !strings.Contains(r.stdout, "galera3") {
		t.Errorf("presets list: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	var sp struct{ Name string }
	if r := e.run("-o", "json", "presets", "show", "galera3"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &sp) != nil || sp.Name != "galera3" {
		t.Errorf("presets show -o json: exit %d %s", r.code, r.stdout)
	}
	c := e.cmd("runs", "list")
	c.Args = []string{bin, "runs", "list"} // no --home
	var env []string
	for _, v := range c.Env {
		if !strings.HasPrefix(v, "HOME=") && !strings.HasPrefix(v, "HADRILL_HOME=") {
			env = append(env, v)
		}
	}
	c.Env = env
	if r := e.collect(c, []string{"runs", "list"}); r.code != 2 || !strings.Contains(r.stderr, "--home: not given, HADRILL_HOME is not set") {
		t.Errorf("no home at all: exit %d %s", r.code, r.stderr)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("title: "+strings.Repeat("x", 2<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("study", "show", "--file", big); r.code != 2 || !strings.Contains(r.stderr, "--file: "+big+" is larger than 1024 KiB") {
		t.Errorf("a 2 MiB study: exit %d %s", r.code, r.stderr)
	}
	valid := e.writeSpec("valid.jsonl", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "value": [["append", 1, 1]]}
{"index": 1, "time": 2, "process": 0, "type": "ok", "f": "txn", "value": [["append", 1, 1]]}
`)
	if r := e.run("check", valid, "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"anomalies": []`) || !strings.Contains(r.stdout, `"forbidden": []`) {
		t.Errorf("check -o json of a valid history: exit %d %s", r.code, r.stdout)
	}
}
