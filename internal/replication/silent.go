package replication

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
)

// SilentAfterCut explains a primary that answers nothing soon after a cut
// between it and other hosts was lifted ("" when none was, in the last two
// minutes): a replica's new connection waits until the primary ends the
// one the cut left dead, which it does only when TCP gives up
// retransmitting into it, and meanwhile the server takes no connection.
func SilentAfterCut(recs []fault.Record, node string, now time.Time) string {
	var cut *fault.Record
	for i, r := range recs {
		switch {
		case r.Fault == fault.Partition && (slices.Contains(r.Targets, node) || slices.Contains(r.From, node)):
			cut = &recs[i]
		case r.Fault == fault.Heal && cut != nil && now.Sub(r.At) < 2*time.Minute:
			return fmt.Sprintf("the cut between %s and %s was lifted at %s; a replica's new connection waits until the primary ends the one the cut left dead, "+
				"which it does only when TCP gives up retransmitting into it, and the server answers nothing meanwhile (measured here: 21 s after a 30 s cut)",
				strings.Join(cut.Targets, ","), strings.Join(cut.From, ","), r.At.Local().Format("15:04:05"))
		case r.Fault == fault.Heal:
			cut = nil
		}
	}
	return ""
}
