package replication

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func pos(t *testing.T, s string) Position {
	t.Helper()
	p, err := ParsePosition(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParsePosition(t *testing.T) {
	for _, good := range []string{"", "1-101-57", "2-201-3,1-101-57"} {
		p := pos(t, good)
		if q := pos(t, p.String()); !reflect.DeepEqual(p, q) {
			t.Fatalf("%q round trip: %v vs %v", good, p, q)
		}
	}
	if got := pos(t, "2-201-3, 1-101-57").String(); got != "1-101-57,2-201-3" {
		t.Fatalf("sorted: %s", got)
	}
	for _, bad := range []string{"1-2", "a-b-c", "1-1-1,1-2-2", "1--3"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
}

func TestCoversAndErrant(t *testing.T) {
	a, b := pos(t, "1-101-10,2-201-3"), pos(t, "1-101-9")
	if !a.Covers(b) || b.Covers(a) {
		t.Fatal("covers")
	}
	if got := b.Missing(a); !reflect.DeepEqual(got, []GTID{{1, 101, 10}, {2, 201, 3}}) {
		t.Fatalf("missing %v", got)
	}
}

func gtidState(t *testing.T, s string) State {
	t.Helper()
	st, err := ParseState(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestErrant(t *testing.T) {
	for _, c := range []struct {
		name, cand, ref string
		ignore          map[uint32]bool
		want            string
	}{
		{"ahead in two domains", "1-101-10,2-201-3", "1-101-9", nil, "[1-101-10 2-201-3]"},
		{"ignored domain", "1-101-10,2-201-3", "1-101-9", map[uint32]bool{2: true}, "[1-101-10]"},
		{"behind is not errant", "1-101-9", "1-101-10,2-201-3", nil, "[]"},
		// the replica wrote 1-103-11 itself; the primary has since committed
		// 1-102-11 and more: the same sequence number, another server
		{"own write hidden by the primary's later ones", "1-102-10,1-103-11", "1-102-12", nil, "[1-103-11]"},
		{"a former primary's writes everyone has", "1-103-4,1-102-10", "1-103-4,1-102-12", nil, "[]"},
		{"no transactions", "", "1-101-1", nil, "[]"},
	} {
		got := fmt.Sprint(Errant(gtidState(t, c.cand), gtidState(t, c.ref), c.ignore))
		if got == "[]" && c.want == "[]" {
			continue
		}
		if got != c.want {
			t.Errorf("%s: errant %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := ParseState("1-101-1,1-101-2"); err == nil {
		t.Error("a server named twice in a domain parsed")
	}
}

func TestChooseSource(t *testing.T) {
	applied := pos(t, "1-101-50")
	ok := func(n, p string) Candidate { return Candidate{Node: n, Healthy: true, Pos: pos(t, p)} }
	bad := func(n, p string) Candidate { return Candidate{Node: n, Pos: pos(t, p)} }
	cases := []struct {
		name    string
		current string
		cands   []Candidate
		repoint bool
		node    string
		behind  string
	}{
		{"healthy source stays", "db1", []Candidate{ok("db1", "1-101-50"), ok("db2", "1-101-50")}, false, "db1", ""},
		{"dead source moves to next healthy", "db1", []Candidate{bad("db1", ""), ok("db2", "1-101-50"), ok("db3", "1-101-50")}, true, "db2", ""},
		{"skips a node behind the receiver", "db1", []Candidate{bad("db1", ""), ok("db2", "1-101-49"), ok("db3", "1-101-51")}, true, "db3", ""},
		{"nobody healthy: wait", "db1", []Candidate{bad("db1", ""), bad("db2", "1-101-50")}, false, "db1", ""},
		{"only nodes behind: wait", "db1", []Candidate{bad("db1", ""), ok("db2", "1-101-10")}, false, "db1", "db2"},
		{"unknown current (after a move) with healthy others", "db9", []Candidate{ok("db2", "1-101-50")}, true, "db2", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ChooseSource(c.current, applied, c.cands)
			if got.Repoint != c.repoint || got.Node != c.node || got.Reason == "" || strings.Join(got.Behind, ",") != c.behind {
				t.Fatalf("%+v", got)
			}
		})
	}
}
