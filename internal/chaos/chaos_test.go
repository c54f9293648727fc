package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/host/hosttest"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// fakeLab is a lab as faults see it: its servers sleep processes (or
// none), its hosts' commands recorded by a runner, its links a recorder,
// its fault log a file; what it was asked to do is in did.
type fakeLab struct {
	*runner
	p       *plan.Plan
	servers Servers
	log     fault.Log
	links   *links
	did     []string
	failKil error
	files   *hosttest.Files // what was written on the hosts
}

func newFakeLab(t *testing.T, p *plan.Plan, s Servers) *fakeLab {
	return &fakeLab{runner: &runner{}, p: p, servers: s, links: &links{}, log: fault.Log(filepath.Join(t.TempDir(), "faults.jsonl"))}
}

func (f *fakeLab) Plan() *plan.Plan { return f.p }
func (f *fakeLab) Host(string) host.Host {
	if f.files == nil {
		f.files = hosttest.New(nil)
	}
	return f.files
}
func (f *fakeLab) Servers() Servers            { return f.servers }
func (f *fakeLab) Links() Links                { return f.links }
func (f *fakeLab) DisksLost() string           { return "" }
func (f *fakeLab) SaveDerived() error          { f.did = append(f.did, "save"); return nil }
func (f *fakeLab) Record(r fault.Record) error { return f.log.Append(r) }
func (f *fakeLab) Logf(string, ...any)         {}
func (f *fakeLab) Restart(_ context.Context, names []string) error {
	f.did = append(f.did, "restart "+strings.Join(names, ","))
	return nil
}
func (f *fakeLab) KillBalancer(_ context.Context, h string, whole bool) error {
	f.did = append(f.did, "kill proxy "+h)
	return nil
}
func (f *fakeLab) KillHost(_ context.Context, name string) error {
	f.did = append(f.did, "kill host "+name)
	return f.failKil
}

// labels are the fault log's records as labels.
func (f *fakeLab) labels() string {
	var out []string
	for _, r := range f.log.Between(time.Time{}, time.Now().Add(time.Hour)) {
		out = append(out, r.Label())
	}
	return strings.Join(out, "; ")
}

type links struct{ changed []string }

func (l *links) Change(_ context.Context, ch netem.Change) error {
	l.changed = append(l.changed, string(ch.Verb)+" "+ch.Link+" "+ch.Value)
	return nil
}
func (l *links) Validate(ch netem.Change) error {
	if ch.Link != "east-west" {
		return errors.New("LINK: no link " + ch.Link)
	}
	return nil
}
func (l *links) Heal(context.Context) error { l.changed = append(l.changed, "heal"); return nil }

// Every kind has a unique name its usage starts with, a description and
// a parser; a command line becomes the fault it names.
func TestKinds(t *testing.T) {
	seen := map[fault.Kind]bool{}
	for _, k := range Kinds() {
		if seen[k.Name] || !strings.HasPrefix(k.Use, string(k.Name)+" ") || k.Short == "" || k.Parse == nil || k.ArgsWhat == "" {
			t.Errorf("kind %+v: duplicate, or its usage does not start with its name, or something is missing", k)
		}
		seen[k.Name] = true
	}
	for _, want := range []fault.Kind{fault.Kill, fault.Stop, fault.Pause, fault.Resume, fault.Crash, fault.Disk, fault.Clock,
		fault.Partition, fault.Delay, fault.Loss, fault.Reorder, fault.Duplicate, fault.Bandwidth} {
		if !seen[want] {
			t.Errorf("no kind %s", want)
		}
	}
	for _, c := range []struct {
		line string
		want Fault
	}{
		{"kill db1 db2", Process{Kind: fault.Kill, Names: []string{"db1", "db2"}}},
		{"crash db3", Crash{"db3"}},
		{"partition db1 --from db2,db3", Partition{Targets: []string{"db1"}, From: []string{"db2", "db3"}}},
		{"partition --from db1 --to db2", Partition{From: []string{"db1"}, To: []string{"db2"}}},
		{"delay east-west 250ms --jitter 10ms", Link{Verb: fault.Delay, Link: "east-west", Value: "250ms", Jitter: "10ms"}},
		{"clock db2 +30s", Clock{Node: "db2", Offset: 30 * time.Second}},
		{"disk db2 --stall 2s", Disk{Node: "db2", Stall: 2 * time.Second}},
		{"disconnect db1 db3 --replication", Disconnect{Names: []string{"db1", "db3"}, Replication: true}},
	} {
		got, err := parse(t, c.line)
		if err != nil || !equal(got, c.want) {
			t.Errorf("%s: %#v %v, want %#v", c.line, got, err, c.want)
		}
	}
	if _, err := parse(t, "partition db1 --to db2"); err == nil || !strings.Contains(err.Error(), "TARGET: a one-way cut takes --from and --to") {
		t.Errorf("targets with --to: %v", err)
	}
}

// parse reads a command line as the CLI does: the kind's flags, then its
// parser.
func parse(t *testing.T, line string) (Fault, error) {
	words := strings.Fields(line)
	for _, k := range Kinds() {
		if string(k.Name) != words[0] {
			continue
		}
		fs := pflag.NewFlagSet(words[0], pflag.ContinueOnError)
		read := k.Parse(fs)
		if err := fs.Parse(words[1:]); err != nil {
			t.Fatal(err)
		}
		return read(fs.Args())
	}
	t.Fatalf("no kind %s", words[0])
	return nil, nil
}

func equal(a, b Fault) bool {
	return strings.ReplaceAll(fmtFault(a), "[]string(nil)", "[]string{}") == strings.ReplaceAll(fmtFault(b), "[]string(nil)", "[]string{}")
}

// Heal runs every family's heal, network first and the servers last, and
// goes on past one that fails.
func TestHealOrder(t *testing.T) {
	var order []fault.Kind
	for _, f := range families {
		order = append(order, f.kinds[0].Name)
	}
	if want := []fault.Kind{fault.Partition, fault.Crash, fault.Delay}; len(order) != len(families) || !slices.Equal(order[:3], want) || order[len(order)-1] != processFaults.kinds[0].Name {
		t.Fatalf("heal order (each family's first kind) %v: want the partitions, crashed hosts' NICs and links first, the servers' processes last", order)
	}
	p := &plan.Plan{Lab: "h", Mode: plan.ModeNetns, Hosts: []plan.Host{{Name: "db1", NICs: []plan.NIC{{Name: "eth0"}}}}}
	l := newFakeLab(t, p, &sleepers{})
	l.runner.fail = map[string]bool{"db1": true} // the lift and the NICs fail
	err := Heal(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), "temporarily unavailable") {
		t.Errorf("heal: %v", err)
	}
	if got := strings.Join(l.links.changed, ","); got != "heal" {
		t.Errorf("the links were not healed past the failures: %q", got)
	}
	if got, want := strings.Join(l.ran, "\n"), "db1: iptables -w -F HDFAULT\ndb1: ip link set eth0 up"; got != want {
		t.Errorf("ran\n%s\nwant\n%s", got, want)
	}
}

// A crash checks every name, then takes the hosts off the network before
// killing their daemons; a dry run changes nothing.
func TestCrash(t *testing.T) {
	p := &plan.Plan{Lab: "c", Mode: plan.ModeNetns, Client: plan.Client{Host: "client"}, Hosts: []plan.Host{
		{Name: "db1", NICs: []plan.NIC{{Name: "eth0"}, {Name: "eth1"}}}, {Name: "client"}}}
	l := newFakeLab(t, p, &sleepers{})
	err := Crash{"client", "db9"}.Inject(context.Background(), l)
	for _, w := range []string{`HOST: "client" is not a host that can crash`, `HOST: "db9"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from %v", w, err)
		}
	}
	if err := (Crash{"db1"}).Inject(fault.Dry(context.Background()), l); err != nil || len(l.ran)+len(l.did) != 0 {
		t.Fatalf("a dry crash: %v, ran %v, did %v", err, l.ran, l.did)
	}
	if err := (Crash{"db1"}).Inject(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(l.ran, "\n"), "db1: ip link set eth0 down\ndb1: ip link set eth1 down"; got != want {
		t.Errorf("ran\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(l.did, ","); got != "kill host db1,save" || l.labels() != "crash db1" {
		t.Errorf("did %s, log %q", got, l.labels())
	}
	l.failKil = errors.New("no such process")
	if err := (Crash{"db1"}).Inject(context.Background(), l); err == nil || l.labels() != "crash db1" {
		t.Errorf("a crash that could not kill: %v, log %q", err, l.labels())
	}
}

// A link fault goes to the emulator, is checked by it in a dry run, and
// is refused where there is no firewall.
func TestLinkFault(t *testing.T) {
	p := &plan.Plan{Lab: "w", Mode: plan.ModeNetns}
	l := newFakeLab(t, p, nil)
	if err := (Link{Verb: fault.Loss, Link: "north-south", Value: "1%"}).Inject(fault.Dry(context.Background()), l); err == nil || !strings.Contains(err.Error(), "no link north-south") {
		t.Errorf("a dry run of an unknown link: %v", err)
	}
	if err := (Link{Verb: fault.Loss, Link: "east-west", Value: "1%"}).Inject(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.links.changed, ","); got != "loss east-west 1%" || l.labels() != "loss east-west 1%" {
		t.Errorf("changed %s, log %q", got, l.labels())
	}
	local := newFakeLab(t, &plan.Plan{Lab: "w", Mode: plan.ModeRootless}, nil)
	if err := (Link{Verb: fault.Loss, Link: "east-west", Value: "1%"}).Inject(context.Background(), local); err == nil || !strings.Contains(err.Error(), "fault loss: a network fault") {
		t.Errorf("a link fault without namespaces: %v", err)
	}
}

func fmtFault(f Fault) string { return fmt.Sprintf("%#v", f) }

// A clock fault writes the node's clock file (libfaketime reads it) and
// restarts a server not yet under libfaketime; heal writes +0. Problems
// are named at once.
func TestClockFault(t *testing.T) {
	if _, err := os.Stat(server.FakeTimeLib); err != nil {
		t.Skip("faketime is not installed (make deps)")
	}
	p := &plan.Plan{Lab: "k", Mode: plan.ModeNetns, Dir: "/lab", Nodes: []plan.Node{{Name: "db1", Host: "db1", DataDir: "/lab/db1/data"}, {Name: "db2", Host: "db2"}}}
	s := startSleepers(t, "db1")
	l := newFakeLab(t, p, s)
	ctx := context.Background()
	err := Clock{Node: "db9", Offset: time.Minute}.Inject(ctx, &fakeLab{runner: l.runner, p: &plan.Plan{Lab: "k", Mode: plan.ModeSSH, Nodes: p.Nodes}, log: l.log})
	for _, w := range []string{`NODE: "db9" is not a node of lab k (nodes: db1, db2)`, "a lab of remote hosts does not take one yet"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from %v", w, err)
		}
	}
	n := &p.Nodes[0]
	if err := (Clock{Node: "db1", Offset: time.Minute}).Inject(ctx, l); err != nil {
		t.Fatal(err)
	}
	if got := l.files.File(server.ClockFile(n)); got != "+60\n" || ClockOf(ctx, l.Host("db1"), n).String() != "+1m0s" {
		t.Errorf("clock file %q", got)
	}
	if got := strings.Join(l.did, ","); got != "restart db1" || l.labels() != "clock db1 +1m0s" {
		t.Errorf("did %s (a sleeper is not under libfaketime: restarted), log %q", got, l.labels())
	}
	if err := healClocks(ctx, l); err != nil || !ClockOf(ctx, l.Host("db1"), n).IsZero() {
		t.Errorf("heal: %v, clock %q", err, l.files.File(server.ClockFile(n)))
	}
}
