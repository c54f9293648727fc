package server

import "testing"

// TestOut: a running member is out of its cluster when Inconsistent, or
// when it cannot answer and its log's last run says it left or was voted
// out; otherwise (a busy member with nothing in its log, one Synced or
// donating) it is not.
func TestOut(t *testing.T) {
	for _, c := range []struct {
		st              State
		voted, reversed string
		want            bool
	}{
		{Inconsistent, "", "", true},
		{Unresponsive, "", "Reversing history: 5506 -> 5505", true},
		{Unresponsive, "Table `app`.`f` is corrupted", "", true},
		{Unresponsive, "", "", false},
		{Synced, "", "Reversing history: 5506 -> 5505", false}, // rejoined since: the log's words are of its last run only
		{DonorDesynced, "", "", false},
	} {
		if got := Out(c.st, c.voted, c.reversed); got != c.want {
			t.Errorf("Out(%s, %q, %q) = %v, want %v", c.st, c.voted, c.reversed, got, c.want)
		}
	}
}
