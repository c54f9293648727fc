package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// Clock is `hadrill fault clock NODE OFFSET [--drift PPM | --strobe
// PERIOD]`: a node's wall clock set Offset from the real one and, with
// Drift, running that many parts per million fast (negative: slow); with
// Strobe, moving between Offset and the real time every Strobe (Jepsen's
// clock strobe, at libfaketime's resolution of a second).
type Clock struct {
	Node   string
	Offset time.Duration
	Drift  float64 // ppm
	Strobe time.Duration
}

// MaxClockOffset bounds an offset: a year either way.
const MaxClockOffset = 366 * 24 * time.Hour

// ParseClock reads the command's OFFSET ("+30s", "-5m", "0") and --drift
// ("500ppm", "-200ppm", "" for none), naming every problem at once.
func ParseClock(node, offset, drift string) (Clock, error) {
	f := Clock{Node: node}
	var problems []string
	if offset != "" && offset != "0" {
		d, err := time.ParseDuration(strings.TrimPrefix(offset, "+"))
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("OFFSET: expected a signed duration such as +30s, -5m or 0, got %q", offset))
		case d.Abs() > MaxClockOffset:
			problems = append(problems, fmt.Sprintf("OFFSET: at most a year either way, got %s", offset))
		default:
			f.Offset = d
		}
	}
	if drift != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(drift, "ppm"), 64)
		switch {
		case err != nil || !strings.HasSuffix(drift, "ppm"):
			problems = append(problems, fmt.Sprintf("--drift: expected parts per million such as 500ppm or -200ppm, got %q", drift))
		case math.Abs(v) > 100000:
			problems = append(problems, fmt.Sprintf("--drift: at most 100000ppm either way (10%%), got %q", drift))
		default:
			f.Drift = v
		}
	}
	if len(problems) == 0 && offset == "" && drift == "" {
		problems = append(problems, "OFFSET: give the clock's offset (e.g. +30s) or --drift")
	}
	return f, hderr.Users(problems)
}

// ParseStrobe reads --strobe PERIOD onto a clock fault parsed from its
// offset, naming every problem (its own, and those err already named).
func ParseStrobe(f Clock, err error, period string) (Clock, error) {
	var problems []string
	var u *hderr.UserError
	if errors.As(err, &u) {
		problems = append(problems, u.Problems...)
	} else if err != nil {
		return f, err
	}
	if period != "" {
		d, perr := time.ParseDuration(period)
		switch {
		case perr != nil || d < server.MinStrobe || d > time.Hour:
			problems = append(problems, fmt.Sprintf("--strobe: expected a period of %v to 1h (libfaketime reads the clock about every 2 s), got %q", server.MinStrobe, period))
		case f.Drift != 0:
			problems = append(problems, "--strobe: moves the clock between OFFSET and the real time; it takes no --drift")
		case f.Offset == 0 && err == nil:
			problems = append(problems, "OFFSET: a strobe moves the clock between an offset and the real time: give one (e.g. +5s)")
		default:
			f.Strobe = d
		}
	}
	return f, hderr.Users(problems)
}

// Spec is the fault as libfaketime's timestamp file says it: an offset in
// seconds and, with a drift, the clock's rate ("+60", "-300 x1.0005").
// The zero fault is "+0": the real time.
func (f Clock) Spec() string {
	s := "+" + strconv.FormatFloat(f.Offset.Seconds(), 'f', -1, 64)
	if f.Offset < 0 {
		s = strconv.FormatFloat(f.Offset.Seconds(), 'f', -1, 64)
	}
	if f.Drift != 0 {
		s += " x" + strconv.FormatFloat(1+f.Drift/1e6, 'f', -1, 64)
	}
	return s
}

// String is the fault as the log, status and the report show it.
func (f Clock) String() string {
	var parts []string
	if f.Offset != 0 || f.Drift == 0 {
		s := f.Offset.String()
		if f.Offset >= 0 {
			s = "+" + s
		}
		parts = append(parts, s)
	}
	if f.Drift != 0 {
		parts = append(parts, fmt.Sprintf("drift %+gppm", f.Drift))
	}
	if f.Strobe > 0 {
		parts = append(parts, "strobing to the real time and back every "+f.Strobe.String())
	}
	return strings.Join(parts, ", ")
}

// ParseSpec reads a timestamp file's text back (Spec's form).
func ParseSpec(node, spec string) Clock {
	f := Clock{Node: node}
	fields := strings.Fields(spec)
	if len(fields) > 0 {
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			f.Offset = time.Duration(v * float64(time.Second))
		}
	}
	if len(fields) > 1 && strings.HasPrefix(fields[1], "x") {
		if v, err := strconv.ParseFloat(fields[1][1:], 64); err == nil {
			f.Drift = math.Round((v-1)*1e6*1000) / 1000
		}
	}
	return f
}

// IsZero says whether the clock is the real one.
func (f Clock) IsZero() bool { return f.Offset == 0 && f.Drift == 0 && f.Strobe == 0 }

// clockFaults are the fault kinds of this file and their heal (families lists them in heal order).
var clockFaults = family{heal: healClocks, kinds: []Kind{{
	Name: fault.Clock, Use: "clock NODE OFFSET [--drift PPM | --strobe PERIOD]",
	Short: "Move a node's wall clock (e.g. +30s, -5m) or make it drift (--drift 500ppm); its server sees it in NOW(), the machine does not",
	Long: `The server runs under Debian's libfaketime (restarted once under it, the first time its clock
moves), which reads the node's clock file every second: NOW(), UNIX_TIMESTAMP(), binary log
event times and GTID timestamps follow the moved clock; CLOCK_MONOTONIC stays the machine's,
as when NTP steps a real clock. OFFSET is signed (+30s, -5m, 0; a negative one after --);
--drift makes the clock run fast or slow from now (500ppm: 43 s a day). --strobe PERIOD moves
it between OFFSET and the real time every PERIOD (2s at least: libfaketime reads the clock
about every 2 s; the lab's keeper turns it) until heal. Heal sets it back to the real time.`,
	MinArgs: 1, MaxArgs: 2, ArgsWhat: "a node and its clock's offset",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		var drift, strobe string
		fs.StringVar(&drift, "drift", "", "the clock runs this many parts per million fast (e.g. 500ppm; negative: slow)")
		fs.StringVar(&strobe, "strobe", "", "the clock moves between OFFSET and the real time every PERIOD (2s to 1h) until heal")
		return func(a []string) (Fault, error) {
			offset := ""
			if len(a) == 2 {
				offset = a[1]
			}
			c, err := ParseClock(a[0], offset, drift)
			return ParseStrobe(c, err, strobe)
		}
	},
}}}

// Inject moves the node's wall clock: its clock file is written, and a
// server not yet running under libfaketime is restarted under it, once
// (from then on its clock moves live).
func (f Clock) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	n, ok := p.Node(f.Node)
	if !ok {
		problems = append(problems, fmt.Sprintf("NODE: %q is not a node of lab %s (nodes: %s)", f.Node, p.Lab, strings.Join(p.NodeNames(), ", ")))
	}
	if p.Mode == plan.ModeSSH {
		problems = append(problems, "fault clock: a clock fault runs the server under this computer's libfaketime; a lab of remote hosts does not take one yet")
	}
	if _, err := os.Stat(server.FakeTimeLib); err != nil {
		problems = append(problems, "fault clock: "+server.FakeTimeLib+" is missing: install Debian's faketime (make deps)")
	}
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	if err := setClock(ctx, l.Host(n.Host), n, f, at); err != nil {
		return err
	}
	if proc, _ := l.Servers().Process(n); proc.Pid != 0 && !fakeTimed(proc.Pid) {
		l.Logf("%s: restarted under libfaketime, once, so that its clock can move (it then moves live)", n.Name)
		if err := l.Restart(ctx, []string{n.Name}); err != nil {
			return err
		}
	}
	l.Logf("%s: clock %s", n.Name, f)
	return l.Record(fault.Record{Fault: fault.Clock, Targets: []string{n.Name}, Value: f.String(), At: at})
}

// setClock writes a node's clock file (and its strobe file, removed for
// a fault that is not a strobe), its clock locked against the keeper's
// strobe.
func setClock(ctx context.Context, h host.Host, n *plan.Node, f Clock, at time.Time) error {
	unlock, err := server.LockClock(n)
	if err != nil {
		return err
	}
	defer unlock()
	if f.Strobe > 0 {
		err = h.WriteFile(ctx, server.StrobeFile(n), []byte(server.Strobe{Spec: f.Spec(), Period: f.Strobe, Start: at}.Text()), 0o644)
	} else {
		err = h.RemoveAll(ctx, server.StrobeFile(n))
	}
	if err != nil {
		return err
	}
	return h.WriteFile(ctx, server.ClockFile(n), []byte(f.Spec()+"\n"), 0o644)
}

// fakeTimed says whether a local process runs under libfaketime.
func fakeTimed(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(b, []byte("FAKETIME_TIMESTAMP_FILE="))
}

// ClockOf is a node's clock fault in force (zero: the real time), read
// from its strobe file when it has one (the clock file then holds the
// offset or the real time, in turn), else its clock file.
func ClockOf(ctx context.Context, h host.Host, n *plan.Node) Clock {
	if b, err := h.ReadFile(ctx, server.StrobeFile(n)); err == nil {
		if st, ok := server.ParseStrobe(string(b)); ok {
			c := ParseSpec(n.Name, st.Spec)
			c.Strobe = st.Period
			return c
		}
	}
	b, err := h.ReadFile(ctx, server.ClockFile(n))
	if err != nil {
		return Clock{Node: n.Name}
	}
	return ParseSpec(n.Name, string(b))
}

// healClocks sets every moved clock back to the real time (the servers
// keep libfaketime, at +0: no restart).
func healClocks(ctx context.Context, l Lab) error {
	p := l.Plan()
	for i := range p.Nodes {
		n := &p.Nodes[i]
		h := l.Host(n.Host)
		if ClockOf(ctx, h, n).IsZero() {
			continue
		}
		if err := setClock(ctx, h, n, Clock{Node: n.Name}, time.Now()); err != nil {
			return err
		}
		l.Logf("%s: clock back to the real time", n.Name)
	}
	return nil
}
