package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
)

// bankWrongTotal is a bank history whose second read sees money vanish.
const bankWrongTotal = `{"index":0,"time":0,"process":0,"type":"ok","f":"init","value":{"0":10,"1":10}}
{"index":1,"time":1,"process":0,"type":"invoke","f":"transfer","value":{"from":0,"to":1,"amount":3}}
{"index":2,"time":2,"process":1,"type":"invoke","f":"read","value":null}
{"index":3,"time":3,"process":0,"type":"ok","f":"transfer","node":"db1","value":{"from":0,"to":1,"amount":3}}
{"index":4,"time":4,"process":1,"type":"ok","f":"read","node":"db2","value":{"0":7,"1":13}}
{"index":5,"time":5,"process":1,"type":"invoke","f":"read","value":null}
{"index":6,"time":6,"process":1,"type":"ok","f":"read","node":"db3","value":{"0":7,"1":10}}
`

// appendValid is a list-append history with nothing any model forbids.
const appendValid = `{"index":0,"time":0,"process":0,"type":"invoke","f":"txn","value":[["append",1,1]]}
{"index":1,"time":1,"process":0,"type":"ok","f":"txn","node":"db1","value":[["append",1,1]]}
{"index":2,"time":2,"process":1,"type":"invoke","f":"txn","value":[["r",1,null]]}
{"index":3,"time":3,"process":1,"type":"ok","f":"txn","node":"db2","value":[["r",1,[1]]]}
`

// TestCheckOutput: check's text and JSON (golden) and exit status: 0 for
// a valid history, 5 for one that shows what every model forbids.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, history string
		args          []string
		code          int
	}{
		{"check-bank.txt", bankWrongTotal, nil, 5},
		{"check-bank.json", bankWrongTotal, []string{"-o", "json"}, 5},
		{"check-append.txt", appendValid, []string{"--model", "serializable"}, 0},
	} {
		file := filepath.Join(dir, strings.TrimSuffix(c.name, filepath.Ext(c.name))+".jsonl")
		if err := os.WriteFile(file, []byte(c.history), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errs, code := hadrill(t, append([]string{"check", file}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", c.name, code, c.code, errs)
		}
		golden.Check(t, c.name, []byte(strings.ReplaceAll(out, dir, "DIR")))
	}
}
