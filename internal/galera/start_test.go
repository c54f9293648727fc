package galera

import (
	"strings"
	"testing"
)

const u = "7f3c1a52-0000-4000-8000-000000000001"

func st(node string, seqno int64, safe, view bool) SavedState {
	return SavedState{Node: node, Present: true, UUID: u, Seqno: seqno, SafeToBootstrap: safe, HasView: view}
}

func TestChooseStart(t *testing.T) {
	cases := []struct {
		name      string
		nodes     []SavedState
		mode      string
		reseed    bool
		bootstrap string
		err       string
	}{
		{"all crashed with views", []SavedState{st("a", -1, false, true), st("b", -1, false, true), st("c", -1, false, true)}, StartTogether, false, "", ""},
		{"clean stop, same seqno", []SavedState{st("a", 7, false, false), st("b", 7, false, false), st("c", 7, true, false)}, StartTogether, true, "", ""},
		{"highest seqno wins, not the first node", []SavedState{st("a", 5, false, false), st("b", 9, false, false), st("c", 7, true, false)}, StartBootstrap, false, "b", ""},
		{"tie broken by safe_to_bootstrap", []SavedState{st("a", 9, false, false), st("b", 5, false, true), st("c", 9, true, false)}, StartBootstrap, false, "c", ""},
		{"single node bootstraps even after a crash", []SavedState{st("a", -1, false, true)}, StartBootstrap, false, "a", ""},
		{"unknown seqno refuses", []SavedState{st("a", 9, false, false), st("b", -1, false, false)}, "", false, "", "seqno unknown on b"},
		{"missing state refuses", []SavedState{st("a", 9, false, false), {Node: "b"}}, "", false, "", "no saved Galera state on b"},
		{"split histories refuse", []SavedState{st("a", 9, false, false), {Node: "b", Present: true, UUID: "other", Seqno: 3}}, "", false, "", "different cluster histories"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ChooseStart(c.nodes)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want error %q", err, c.err)
				}
				return
			}
			if err != nil || got.Mode != c.mode || got.Reseed != c.reseed || got.Bootstrap != c.bootstrap {
				t.Fatalf("got %+v, %v", got, err)
			}
			if got.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestParseGrastate(t *testing.T) {
	s, err := ParseGrastate("# GALERA saved state\nversion: 2.1\nuuid:    " + u + "\nseqno:   -1\nsafe_to_bootstrap: 1\n")
	if err != nil || s.UUID != u || s.Seqno != -1 || !s.SafeToBootstrap {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := ParseGrastate("seqno: x\nuuid: a\n"); err == nil {
		t.Fatal("bad seqno accepted")
	}
	if _, err := ParseGrastate("version: 2.1\n"); err == nil {
		t.Fatal("missing uuid accepted")
	}
}

func TestChooseStartForced(t *testing.T) {
	unknown := []SavedState{st("a", 9, false, false), st("b", -1, false, false)}
	if _, err := ChooseStartForced(unknown, ""); err == nil {
		t.Fatal("no refusal without --force")
	}
	got, err := ChooseStartForced(unknown, "b")
	if err != nil || got.Mode != StartBootstrap || got.Bootstrap != "b" || !strings.Contains(got.Reason, "forced") {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ChooseStartForced(unknown, "z"); err == nil || !strings.Contains(err.Error(), "not a node") {
		t.Fatalf("unknown node: %v", err)
	}
	if _, err := ChooseStartForced([]SavedState{{Node: "a"}, st("b", 3, false, false)}, "a"); err == nil {
		t.Fatal("forced a node without state")
	}
}

// TestChooseStartZeroAndUnreadable: a node with the zero state UUID (a
// crash during its state transfer) is never a candidate, never forced, and
// joins after the others; nothing is decided from a state that could not
// be read, and --force is not suggested then; split histories name who
// holds which.
func TestChooseStartZeroAndUnreadable(t *testing.T) {
	zero := SavedState{Node: "c", Present: true, UUID: ZeroUUID, Seqno: -1, HasView: true}
	got, err := ChooseStart([]SavedState{st("a", 7, false, true), st("b", 9, false, true), zero})
	if err != nil || got.Mode != StartBootstrap || got.Bootstrap != "b" || strings.Join(got.Joiners, ",") != "c" ||
		!strings.Contains(got.Reason, "c holds no state (the zero state UUID") || !strings.Contains(got.Reason, "c joins by a full state transfer") {
		t.Fatalf("zero UUID node: %+v %v", got, err)
	}
	// the others stopped cleanly at one seqno: one of them bootstraps (a
	// restored view would wait for the joiner)
	got, err = ChooseStart([]SavedState{zero, st("a", 7, false, false), st("b", 7, true, false)})
	if err != nil || got.Mode != StartBootstrap || got.Bootstrap != "b" || len(got.Joiners) != 1 {
		t.Fatalf("zero UUID beside a clean stop: %+v %v", got, err)
	}
	got, err = ChooseStart([]SavedState{zero, st("a", 3, false, true)})
	if err != nil || got.Bootstrap != "a" || !strings.Contains(got.Reason, "a is the only node holding the cluster's state") {
		t.Fatalf("one holder: %+v %v", got, err)
	}
	if _, err := ChooseStart([]SavedState{st("a", -1, false, true), st("b", -1, false, true), zero}); err == nil || !strings.Contains(err.Error(), "seqno unknown on a, b") {
		t.Fatalf("unknown positions beside a zero node: %v", err)
	}
	if _, err := ChooseStart([]SavedState{zero, {Node: "d", Present: true, UUID: ZeroUUID}}); err == nil || !strings.Contains(err.Error(), "no node holds cluster state (c, d") || strings.Contains(err.Error(), "--force") {
		t.Fatalf("every node empty: %v", err)
	}
	if _, err := ChooseStartForced([]SavedState{st("a", 7, false, true), zero}, "c"); err == nil || !strings.Contains(err.Error(), "--force c: it holds no cluster state") {
		t.Fatalf("forcing the zero node: %v", err)
	}
	if got, err := ChooseStartForced([]SavedState{st("a", 7, false, true), st("b", -1, false, true), zero}, "b"); err != nil || got.Bootstrap != "b" || strings.Join(got.Joiners, ",") != "c" {
		t.Fatalf("forcing a holder beside a zero node: %+v %v", got, err)
	}
	// an IO error is never a diagnosis
	eio := SavedState{Node: "b", Unreadable: "read grastate.dat: input/output error"}
	for _, nodes := range [][]SavedState{{st("a", 7, false, true), eio}, {{Node: "a", Present: true, UUID: "x", Seqno: 1}, eio, st("c", 2, false, false)}} {
		_, err := ChooseStart(nodes)
		if err == nil || !strings.Contains(err.Error(), "the saved state of b (read grastate.dat: input/output error) could not be read") ||
			strings.Contains(err.Error(), "--force") || strings.Contains(err.Error(), "histories") {
			t.Errorf("unreadable: %v", err)
		}
	}
	if _, err := ChooseStartForced([]SavedState{st("a", 7, false, true), eio}, "b"); err == nil || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("forcing an unreadable node: %v", err)
	}
	_, err = ChooseStart([]SavedState{st("a", 9, false, false), st("b", 9, false, false), {Node: "c", Present: true, UUID: "9a1b", Seqno: 3}})
	if err == nil || !strings.Contains(err.Error(), "a, b hold state "+u) || !strings.Contains(err.Error(), "c holds state 9a1b") {
		t.Errorf("split histories name who holds which: %v", err)
	}
}
