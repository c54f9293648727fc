package consistency

import (
	"bytes"
	"context"
	"testing"
)

// BenchmarkCheck times reading and checking histories of 1,000,000
// operations whose keys retire after 100 appends, as the list-append
// workload's do: valid, one read in twenty stale, and from 200 clients.
// (go test -run - -bench Check -benchtime 1x ./internal/consistency)
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct {
		name  string
		procs int
		stale bool
	}{{"valid", 10, false}, {"stale", 10, true}, {"wide", 200, false}} {
		var file bytes.Buffer
		if err := Write(&file, SimulateKeys(500_000, c.procs, 100, 100, c.stale, 1)); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ops, err := Read(bytes.NewReader(file.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Check(context.Background(), ops, "strict-serializable"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(1_000_000*b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
