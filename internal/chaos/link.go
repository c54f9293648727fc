package chaos

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/netem"
)

// Link changes a WAN link's delay, loss, reordering, duplication,
// corruption or bandwidth, through the lab's WAN emulator (heal gives the spec's values
// back).
type Link netem.Change

// linkFaults are the fault kinds of this file and their heal (families lists them in heal order).
var linkFaults = func() family {
	kind := func(k fault.Kind, use, short string) Kind {
		return Kind{Name: k, Use: use, Short: short, MinArgs: 2, MaxArgs: 2, ArgsWhat: "a link (REGION-REGION) and a value",
			Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
				var jitter string
				if k == fault.Delay {
					fs.StringVar(&jitter, "jitter", "", "round-trip jitter (uniform, packets keep their order)")
				}
				return func(a []string) (Fault, error) {
					return Link{Verb: k, Link: a[0], Value: a[1], Jitter: jitter}, nil
				}
			}}
	}
	return family{heal: func(ctx context.Context, l Lab) error { return l.Links().Heal(ctx) }, kinds: []Kind{
		kind(fault.Delay, "delay LINK RTT [--jitter D]", "Set a link's round-trip time (0 to 10s, e.g. 250ms): each direction gets half"),
		kind(fault.Loss, "loss LINK PERCENT", "Set the share of packets a link loses in each direction (0 to 100, e.g. 1%)"),
		kind(fault.Reorder, "reorder LINK PERCENT", "Send a share of a link's packets at once, overtaking the delayed ones before them (0 to 100, e.g. 25%; the link needs a delay)"),
		kind(fault.Duplicate, "duplicate LINK PERCENT", "Make a share of a link's packets arrive twice, both copies delayed (0 to below 100, e.g. 1%)"),
		kind(fault.Corrupt, "corrupt LINK PERCENT", "Flip a bit in a share of a link's packets (0 to 100, e.g. 0.1%): the receiver's checksum check drops them and counts them (InCsumErrors)"),
		kind(fault.Bandwidth, "bandwidth LINK RATE", "Cap what each host sends over a link (e.g. 10mbit; unlimited lifts the cap)"),
	}}
}()

// Inject checks the change (the emulator's own validation) and makes it.
func (f Link) Inject(ctx context.Context, l Lab) error {
	if why := l.Plan().WithoutFirewall(); why != "" {
		return hderr.User("fault %s: a network fault %s", f.Verb, why)
	}
	ch := netem.Change(f)
	if fault.IsDry(ctx) {
		return l.Links().Validate(ch)
	}
	rec := fault.Record{Fault: f.Verb, Targets: []string{f.Link}, Value: f.Value, At: time.Now().UTC()}
	if err := l.Links().Change(ctx, ch); err != nil {
		return err
	}
	return l.Record(rec)
}
