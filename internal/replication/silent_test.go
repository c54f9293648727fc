package replication

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
)

// TestSilentAfterCut (the labs review's finding 1): a primary that answers
// nothing within two minutes of a cut's heal is explained by it.
func TestSilentAfterCut(t *testing.T) {
	at := time.Date(2026, 11, 27, 4, 16, 0, 0, time.Local)
	recs := []fault.Record{{At: at, Fault: fault.Partition, Targets: []string{"db1"}, From: []string{"db2", "db3"}}, {At: at.Add(30 * time.Second), Fault: fault.Heal}}
	if got := SilentAfterCut(recs, "db1", at.Add(40*time.Second)); !strings.Contains(got, "the cut between db1 and db2,db3 was lifted at 04:16:30") {
		t.Errorf("%q", got)
	}
	if got := SilentAfterCut(recs, "db1", at.Add(5*time.Minute)); got != "" {
		t.Errorf("long after the heal: %q", got)
	}
	if got := SilentAfterCut(recs, "db4", at.Add(40*time.Second)); got != "" {
		t.Errorf("another node: %q", got)
	}
}
