package study

import (
	"context"
	"errors"
	"io"

	"github.com/hadrill/hadrill/internal/workload"
)

// donorProbeKind is the step kind donor-probe: the health check's contract through a load balancer
// balanced over a Galera cluster. One member (node; by default the
// first) is made Donor/Desynced; new connections through the load
// balancer (target; by default lb) are counted on it while it is Synced,
// Donor, and Synced again.
var donorProbeKind = &stepKind{
	name:    "donor-probe",
	fields:  []string{"node"},
	metrics: []string{"synced_share", "donor_share", "back_share", "donor_ok", "out_s", "back_s"},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if sc.Count < 10 || sc.Count > 10_000 {
			add("count", "expected 10 to 10000 new connections a phase (step %s), got %d", st.Name, sc.Count)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		lb, err := workload.Resolve(ctx, m.lab, m.target, "")
		if err != nil {
			return nil, err
		}
		out, err := workload.DonorProbe(ctx, m.lab, lb, m.step.Node, m.scale.Count, m.opts.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		rs, _ := out.Results.([]workload.Donor)
		if len(rs) == 0 {
			return nil, errors.New("no phase measured")
		}
		r := rs[0]
		ok := 0.0
		if r.DonorProbe == 200 {
			ok = 1
		}
		return samples(m.step, out.RunID, "synced_share", r.SyncedShare, "donor_share", r.DonorShare, "back_share", r.BackShare,
			"donor_ok", ok, "out_s", r.OutS, "back_s", r.BackS), nil
	},
	describe: func(_ Step, metric string) string {
		switch metric {
		case "synced_share":
			return "Share of new connections through the load balancer that landed on the member while it was Synced"
		case "donor_share":
			return "Share of new connections through the load balancer that landed on the member while it was Donor/Desynced (from 2 s after the desync)"
		case "back_share":
			return "Share of new connections through the load balancer that landed on the member once Synced again"
		case "donor_ok":
			return "1 when the member's health check answered 200 while it was Donor/Desynced, else 0"
		case "out_s":
			return "Seconds after the desync until the last new connection landed on the member (0: none did)"
		}
		return "Seconds after the member was Synced again until a new connection landed on it"
	},
}
