package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/workload"
)

// printProbe prints a two-node probe's results (visibility,
// bulk-replication, conflict) as a table, the answer first; any other
// probe's as its JSON.
func (cli *app) printProbe(out *workload.ProbeOutcome) error {
	if err := cli.emit(out, func() { printProbeText(os.Stdout, out) }); err != nil {
		return err
	}
	return interrupted(out.Interrupted, out.RunID)
}

func printProbeText(out io.Writer, o *workload.ProbeOutcome) {
	fmt.Fprintf(out, "run %s\n", o.RunID)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	defer w.Flush()
	switch rs := o.Results.(type) {
	case []workload.Visibility:
		for _, v := range rs {
			fmt.Fprintf(out, "a write acknowledged on %s was readable on %s after %.2f ms at the median, %.2f ms at p99 (wsrep_sync_wait=%d)\n", v.From, v.To, v.P50, v.P99, v.SyncWait)
		}
		fmt.Fprintln(w, "written on\tread on\twsrep_sync_wait\twrites\tp50 ms\tp95 ms\tp99 ms\tmax ms\treads until visible\t")
		for _, v := range rs {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", v.From, v.To, v.SyncWait, v.Count, v.P50, v.P95, v.P99, v.Max, v.Polls)
		}
	case []workload.Bulk:
		for _, b := range rs {
			fmt.Fprintf(out, "%d rows committed one at a time on %s were all on %s %.2f s after the first was written (%.2f s after the last was acknowledged)\n", b.Rows, b.From, b.To, b.VisibleS, b.AfterLastS)
		}
		fmt.Fprintln(w, "written on\tread on\trows\twritten in s\tall visible after s\tafter the last ack s\t")
		for _, b := range rs {
			fmt.Fprintf(w, "%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t\n", b.From, b.To, b.Rows, b.WriteS, b.VisibleS, b.AfterLastS)
		}
	case []workload.Conflict:
		for _, c := range rs {
			writing := fmt.Sprintf("writing the same %d rows at once", c.Rows)
			if c.Keys == workload.KeysOwn {
				writing = fmt.Sprintf("each writing %d rows of its own", c.Rows)
			}
			fmt.Fprintf(out, "%s and %s %s: %d rows diverged, %d acknowledged increments lost\n", c.A, c.B, writing, c.Diverged, c.Lost)
		}
		fmt.Fprintln(w, "primaries\tkeys\trows\tincrements acked\twrite s\tsettle s\tdiverged rows\tlost increments\tchecksums\t")
		for _, c := range rs {
			sums := "equal"
			if c.ChecksumA != c.ChecksumB {
				sums = c.ChecksumA + " / " + c.ChecksumB
			}
			fmt.Fprintf(w, "%s, %s\t%s\t%d\t%d\t%.2f\t%.2f\t%d\t%d\t%s\t\n", c.A, c.B, c.Keys, c.Rows, c.Acked, c.WriteS, c.SettleS, c.Diverged, c.Lost, sums)
		}
	default:
		b, _ := json.MarshalIndent(o.Results, "", "  ")
		fmt.Fprintf(out, "%s\n", b)
	}
}
