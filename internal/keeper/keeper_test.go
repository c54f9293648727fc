package keeper

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestReplicated(t *testing.T) {
	p := &plan.Plan{Lab: "t", Dir: "/h/labs/t", Channels: []plan.Channel{{Name: "dr", From: "db", To: "dr"}},
		Clusters: []plan.Cluster{{Name: "db", Kind: spec.KindGalera}, {Name: "dr", Kind: spec.KindStandalone},
			{Name: "ps", Kind: spec.KindPrimary}, {Name: "solo", Kind: spec.KindGalera}}}
	for i, want := range []bool{true, false, true, false} {
		if got := Replicated(p, &p.Clusters[i]); got != want {
			t.Errorf("%s: replicated %v, want %v", p.Clusters[i].Name, got, want)
		}
	}
	plan.Complete(p)
	d := Daemon(p, "/h", "/bin/hadrill")
	if d.Marker != "--lab-dir /h/labs/t" || d.Dir != "/h/labs/t/keeper" || d.Argv[len(d.Argv)-1] != "/h/labs/t" {
		t.Errorf("keeper daemon %+v", d)
	}
}

func TestStamped(t *testing.T) {
	var b strings.Builder
	w := Stamped(&b)
	fmt.Fprintf(w, "one\ntwo\n")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "Z one") || !strings.HasSuffix(lines[1], "Z two") || lines[0][4] != '-' {
		t.Errorf("stamped %q", b.String())
	}
}

func TestVantage(t *testing.T) {
	hosts := []plan.Host{{Name: "db1", Netns: "hd-t-db1"}, {Name: "db2", Netns: "hd-t-db2"}, {Name: "db3", Netns: "hd-t-db3"},
		{Name: "lb1", Netns: "hd-t-lb1"}, {Name: "lb2", Netns: "hd-t-lb2"}}
	nodes := []plan.Node{{Name: "db1", Host: "db1"}, {Name: "db2", Host: "db2"}, {Name: "db3", Host: "db3"}}
	c := plan.Cluster{Name: "ps", Kind: spec.KindPrimary, Nodes: []string{"db1", "db2", "db3"}}
	names := func(hs []plan.Host) string {
		var s []string
		for _, h := range hs {
			s = append(s, h.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		name           string
		mode           string
		lbs            []plan.LB
		want, lookouts string
	}{
		{"the load balancer pair's hosts, as clients see it", plan.ModeNetns,
			[]plan.LB{{Name: "lb", Cluster: "ps", Instances: []plan.LBInstance{{Host: "lb1"}, {Host: "lb2"}}}}, "lb1,lb2", "lb1,lb2,db2,db3"},
		{"another cluster's load balancer does not count", plan.ModeNetns,
			[]plan.LB{{Name: "lb", Cluster: "other", Instances: []plan.LBInstance{{Host: "lb1"}}}}, "db2,db3", "db2,db3"},
		{"no load balancer: the other nodes' hosts", plan.ModeNetns, nil, "db2,db3", "db2,db3"},
		{"a remote lab: none here", plan.ModeSSH, []plan.LB{{Name: "lb", Cluster: "ps", Instances: []plan.LBInstance{{Host: "lb1"}}}}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Plan{Lab: "t", Mode: tc.mode, Hosts: hosts, Nodes: nodes, Clusters: []plan.Cluster{c}, LoadBalancers: tc.lbs}
			if got := names(Vantage(p, &p.Clusters[0], "db1")); got != tc.want {
				t.Errorf("vantage %q, want %q", got, tc.want)
			}
			if got := names(Lookouts(p, &p.Clusters[0], "db1")); got != tc.lookouts {
				t.Errorf("lookouts %q, want %q", got, tc.lookouts)
			}
		})
	}
}

// TestDue: a primary whose server is gone is failed over after Misses
// ticks; one that runs only once it has been out of reach for
// failover_after since it was last seen (never seen: since it first
// missed), so a shorter cut never fails over.
func TestDue(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		name         string
		misses       int
		gone         bool
		seen, missed time.Time
		now          time.Time
		want         bool
	}{
		{"one miss: never", 1, true, at(0), at(100), at(5000), false},
		{"gone: after two misses", 2, true, at(0), at(300), at(600), true},
		{"runs, out of reach 0.6 s of 1 s", 2, false, at(0), at(300), at(600), false},
		{"runs, out of reach 1 s", 5, false, at(0), at(300), at(1000), true},
		{"never seen: from its first miss", 4, false, time.Time{}, at(300), at(1200), false},
		{"never seen, 1 s after its first miss", 5, false, time.Time{}, at(300), at(1300), true},
	} {
		if got := Due(c.misses, c.gone, c.seen, c.missed, c.now, time.Second); got != c.want {
			t.Errorf("%s: due %v, want %v", c.name, got, c.want)
		}
	}
}

// TestOrphanedKeeperEnds: a keeper whose lab's directory was removed (by
// hand, while it ran) ends by itself instead of keeping nothing forever,
// its archiver too (the keeper once waited for it, and it for the end of
// a context no one cancelled).
func TestOrphanedKeeperEnds(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	k := &Keeper{Repl: &replication.Manager{Plan: &plan.Plan{Lab: "t", Dir: dir}}, Log: &log,
		Archive: func(context.Context, *plan.Node) error { return nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	time.Sleep(2 * Tick)
	select {
	case err := <-done:
		t.Fatalf("the keeper of a lab still there ended: %v", err)
	default:
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(log.String(), "is gone") {
			t.Errorf("orphaned keeper: %v, log %q", err, log.String())
		}
	case <-ctx.Done():
		t.Fatal("the keeper of a removed lab kept running")
	}
}

// TestStrobes: the keeper turns a node's clock file between the strobe's
// offset and the real time each period, and stops when the strobe goes.
func TestStrobes(t *testing.T) {
	dir := t.TempDir()
	n := plan.Node{Name: "db1", Dir: dir}
	k := &Keeper{Repl: &replication.Manager{Plan: &plan.Plan{Lab: "t", Dir: dir, Nodes: []plan.Node{n}}}}
	k.last = map[string]string{}
	st := server.Strobe{Spec: "-20", Period: 2 * time.Second, Start: time.Now()}
	if err := os.WriteFile(server.StrobeFile(&n), []byte(st.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); k.strobes(ctx) }()
	seen := map[string]bool{}
	for end := time.Now().Add(4500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(server.ClockFile(&n))
		seen[strings.TrimSpace(string(b))] = true
	}
	cancel()
	<-done
	if !seen["-20"] || !seen["+0"] {
		t.Errorf("clock file held %v, want -20 and +0 in turn", seen)
	}
}
