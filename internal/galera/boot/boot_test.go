package boot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/host/hosttest"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// fakeLab holds every host's files in one map and records the starts
// asked of it, each as "node options" in order.
type fakeLab struct {
	p      *plan.Plan
	files  *hosttest.Files
	starts []string
	fail   int // the first starts asked fail (after pass)
	pass   int // the first starts asked succeed
	// out: the failed starts leave the node running, out of its cluster
	// (Inconsistent); stops are the nodes stopped
	out   bool
	stops []string
	// named: the out-of-cluster failure names its node (server.OutOfCluster);
	// busy: the node's state cannot be read (a probe that timed out)
	named, busy bool
	alive       map[string]bool // nodes running whatever else says
	// donating: how many more probes find a running node Donor/Desynced
	donating int
	// ghosts: how many more reads of a view count one member more than
	// runs (a failed joiner not yet evicted)
	ghosts int
}

func (f *fakeLab) Members(_ context.Context, n *plan.Node) int {
	running := len(Running(f, n.Cluster))
	if f.ghosts > 0 {
		f.ghosts--
		return running + 1
	}
	return running
}

func (f *fakeLab) Plan() *plan.Plan        { return f.p }
func (f *fakeLab) Host(string) host.Host   { return f.files }
func (f *fakeLab) Alive(n *plan.Node) bool { return f.out || f.alive[n.Name] }
func (f *fakeLab) State(context.Context, *plan.Node) server.State {
	switch {
	case f.busy:
		return server.Unresponsive
	case f.out:
		return server.Inconsistent
	case f.donating > 0:
		f.donating--
		return server.DonorDesynced
	}
	return server.Down
}
func (f *fakeLab) Stop(_ context.Context, n *plan.Node) error {
	f.stops = append(f.stops, n.Name)
	return nil
}
func (f *fakeLab) Admin(*plan.Node) *sql.DB { panic("no server here") }
func (f *fakeLab) Logf(string, ...any)      {}
func (f *fakeLab) Start(_ context.Context, nodes []*plan.Node, extra map[string][]string) error {
	for _, n := range nodes {
		f.starts = append(f.starts, strings.TrimSpace(n.Name+" "+strings.Join(extra[n.Name], " ")))
	}
	if f.pass > 0 {
		f.pass--
		return nil
	}
	if f.fail > 0 {
		f.fail--
		if f.out && f.named {
			return fmt.Errorf("%s mariadbd: %w", nodes[0].Name, &server.OutOfCluster{Node: nodes[0].Name, Why: "it left its cluster"})
		}
		if f.out {
			return fmt.Errorf("mariadbd: %w: left its cluster as it joined (state Inconsistent)", server.ErrOutOfCluster)
		}
		return errors.New("db3 mariadbd exited during start-up")
	}
	return nil
}
func (f *fakeLab) StartForming(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	f.starts = append(f.starts, "forming:")
	return f.Start(ctx, nodes, extra)
}

const uuid = "6b2f6c3e-0000-11ef-8000-000000000001"

// galera3 is a Galera cluster of three whose nodes saved these seqnos
// (-2: no grastate.dat at all).
func galera3(seqnos ...int64) *fakeLab {
	f := &fakeLab{files: hosttest.New(nil), p: &plan.Plan{Lab: "b", Clusters: []plan.Cluster{{Name: "db", Kind: spec.KindGalera, Nodes: []string{"db1", "db2", "db3"}}}}}
	for i, s := range seqnos {
		name := "db" + string(rune('1'+i))
		n := plan.Node{Name: name, Host: name, Cluster: "db", Kind: spec.KindGalera, DataDir: "/lab/" + name + "/data", Dir: "/lab/" + name}
		f.p.Nodes = append(f.p.Nodes, n)
		if s > -2 {
			_ = f.files.WriteFile(context.Background(), filepath.Join(n.DataDir, mariadb.Grastate), []byte("# GALERA saved state\nversion: 2.1\nuuid: "+uuid+"\nseqno: "+itoa(s)+"\nsafe_to_bootstrap: 0\n"), 0)
		}
	}
	return f
}

func itoa(n int64) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func (f *fakeLab) down() []*plan.Node {
	var out []*plan.Node
	for i := range f.p.Nodes {
		out = append(out, &f.p.Nodes[i])
	}
	return out
}

// A cluster stopped cleanly starts from its most advanced node: it is
// marked safe to bootstrap and starts a new primary component, the others
// then join it, taking their state from it.
func TestStartFromTheMostAdvanced(t *testing.T) {
	f := galera3(10, 12, 11)
	if err := Start(context.Background(), f, f.p.Clusters[0], f.down(), ""); err != nil {
		t.Fatal(err)
	}
	want := "db2 " + server.BootstrapFlag + "; db1 --wsrep-sst-donor=db2,; db3 --wsrep-sst-donor=db2,"
	if got := strings.Join(f.starts, "; "); got != want {
		t.Errorf("starts\n%s\nwant\n%s", got, want)
	}
	if g := f.files.File("/lab/db2/data/" + mariadb.Grastate); !strings.Contains(g, "safe_to_bootstrap: 1") {
		t.Errorf("db2's grastate.dat:\n%s", g)
	}
	if g := f.files.File("/lab/db1/data/" + mariadb.Grastate); strings.Contains(g, "safe_to_bootstrap: 1") {
		t.Errorf("db1 was marked safe to bootstrap:\n%s", g)
	}
}

// A cluster whose most advanced node cannot be known (a crash left seqno
// -1 and no position can be recovered here) is refused, and nothing is
// started; the operator's --force then decides.
func TestStartRefusesWhenUnknown(t *testing.T) {
	f := galera3(-1, 12, 11)
	err := Start(context.Background(), f, f.p.Clusters[0], f.down(), "")
	if err == nil || !strings.Contains(err.Error(), "db1") || len(f.starts) != 0 {
		t.Fatalf("err %v, starts %v", err, f.starts)
	}
	if err := Start(context.Background(), f, f.p.Clusters[0], f.down(), "db3"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.Join(f.starts, "; "), "db3 "+server.BootstrapFlag) {
		t.Errorf("forced: %v", f.starts)
	}
}

// Nodes of a cluster that still runs join it from their own positions.
func TestStartJoiners(t *testing.T) {
	f := galera3(10, 12, 11)
	if err := Start(context.Background(), f, f.p.Clusters[0], f.down()[:1], ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.starts, "; "); got != "db1" {
		t.Errorf("starts %q", got)
	}
}

// TestJoinerWhoseDonorLeft: a joiner whose start aborted because its
// donor left the group during its state transfer, or whose incremental
// transfer failed, is started again (at most twice more); one that failed
// otherwise is not.
func TestJoinerWhoseDonorLeft(t *testing.T) {
	f := galera3(5, 5, 5)
	n := &f.p.Nodes[2]
	n.LogFile = "/lab/db3/error.log"
	left := "2026-11-27 20:50:12 0 [Warning] WSREP: Donor 693a7696-2439 is no longer in the group. State transfer cannot be completed, need to abort.\n"
	_ = f.files.WriteFile(context.Background(), n.LogFile, []byte(left), 0)
	f.fail = 1
	if err := Start(context.Background(), f, f.p.Clusters[0], []*plan.Node{n}, ""); err != nil || len(f.starts) != 2 {
		t.Errorf("donor left: %v, starts %q", err, f.starts)
	}
	f.starts, f.fail = nil, 5
	if err := Start(context.Background(), f, f.p.Clusters[0], []*plan.Node{n}, ""); err == nil || len(f.starts) != 3 {
		t.Errorf("donor left every time: %v, starts %q (want the first and two more)", err, f.starts)
	}
	ist := "2026-11-27 21:40:03 2 [ERROR] WSREP: Receiving IST failed, node restart required: IST receiver reported failure: 71 (Protocol error)\n"
	_ = f.files.WriteFile(context.Background(), n.LogFile, []byte(ist), 0)
	f.starts, f.fail = nil, 1
	if err := Start(context.Background(), f, f.p.Clusters[0], []*plan.Node{n}, ""); err != nil || len(f.starts) != 2 {
		t.Errorf("IST failed: %v, starts %q", err, f.starts)
	}
	// out of its cluster as it joined (alive, Inconsistent): stopped, then
	// started again
	f.starts, f.fail, f.out = nil, 1, true
	if err := Start(context.Background(), f, f.p.Clusters[0], []*plan.Node{n}, ""); err != nil || len(f.starts) != 2 || strings.Join(f.stops, ",") != "db3" {
		t.Errorf("out of its cluster: %v, starts %q, stops %q", err, f.starts, f.stops)
	}
	f.out = false
	_ = f.files.WriteFile(context.Background(), n.LogFile, []byte("2026-11-27 20:50:12 0 [ERROR] InnoDB: something else\n"), 0)
	f.starts, f.fail = nil, 1
	if err := Start(context.Background(), f, f.p.Clusters[0], []*plan.Node{n}, ""); err == nil || len(f.starts) != 1 {
		t.Errorf("another failure: %v, starts %q", err, f.starts)
	}
}

// TestOutOfClusterRejoins: a joiner its start error names as out of its
// cluster is stopped and started again even when its state cannot be read
// (a server too busy to answer a probe); one that left because the
// primary component had applied fewer write sets than it had ("Reversing
// history") has its Galera state removed first, so that it joins by a full
// state transfer rather than from its own position (its write sets there
// are not the cluster's); one out for another reason keeps its state.
func TestOutOfClusterRejoins(t *testing.T) {
	ctx := context.Background()
	for _, reversed := range []bool{false, true} {
		f := galera3(5, 5, 5)
		n := &f.p.Nodes[0]
		n.LogFile = "/lab/db1/error.log"
		log := "2026-12-01  4:18:10 0 [Note] WSREP: Recovered position: " + uuid + ":5\n"
		if reversed {
			log += "2026-12-01  4:18:19 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:group_post_state_exchange():453: Reversing history: 5 -> 4, this member has applied 1 more events than the primary component.Data loss is possible. Must abort.\n"
		}
		_ = f.files.WriteFile(ctx, n.LogFile, []byte(log), 0)
		_ = f.files.WriteFile(ctx, "/lab/db1/data/"+mariadb.Gvwstate, []byte("my_uuid: x\n"), 0)
		f.fail, f.out, f.named, f.busy = 1, true, true, true
		err := Start(ctx, f, f.p.Clusters[0], []*plan.Node{n}, "")
		if err != nil || len(f.starts) != 2 || strings.Join(f.stops, ",") != "db1" {
			t.Errorf("reversed %v: %v, starts %q, stops %q", reversed, err, f.starts, f.stops)
			continue
		}
		_, gerr := f.files.ReadFile(ctx, "/lab/db1/data/"+mariadb.Grastate)
		_, verr := f.files.ReadFile(ctx, "/lab/db1/data/"+mariadb.Gvwstate)
		if forgot := gerr != nil && verr != nil; forgot != reversed {
			t.Errorf("reversed %v: Galera state removed %v (grastate %v, gvwstate %v)", reversed, forgot, gerr, verr)
		}
		if reversed && f.starts[1] != "db1" { // no position: a full state transfer
			t.Errorf("started again as %q, want no position", f.starts[1])
		}
	}
	// the error names another node, and this one's state is unknown: left alone
	f := galera3(5, 5, 5)
	f.fail, f.out, f.named, f.busy = 1, true, true, true
	err := fmt.Errorf("db2 mariadbd: %w", &server.OutOfCluster{Node: "db2"})
	if again := outOfCluster(ctx, f, []*plan.Node{&f.p.Nodes[0]}, err); len(again) != 0 || len(f.stops) != 0 {
		t.Errorf("db1 stopped on db2's error: %v, stops %v", again, f.stops)
	}
}

// TestOutOfClusterNodes: the nodes an error tree names out of their
// cluster, through wrapping and errors.Join.
func TestOutOfClusterNodes(t *testing.T) {
	err := fmt.Errorf("cluster db: %w", errors.Join(errors.New("db3: exited"),
		fmt.Errorf("db1 mariadbd: %w", &server.OutOfCluster{Node: "db1", Why: "w"}), &server.OutOfCluster{Node: "db2"}))
	if got := strings.Join(server.OutOfClusterNodes(err), ","); got != "db1,db2" || !errors.Is(err, server.ErrOutOfCluster) {
		t.Errorf("nodes %q, is %v", got, errors.Is(err, server.ErrOutOfCluster))
	}
	if !strings.Contains(err.Error(), "out of its cluster: left its cluster as it joined (state Inconsistent; w)") {
		t.Errorf("message %q", err)
	}
}

// TestFallenOutAsTheClusterForms: a member that fell out of the membership
// as a crashed cluster re-formed (its state exchange failed) while the
// others formed it is a joiner of what they formed: started again, every
// member that runs waited for and set back on stock timing (StartForming
// once more); a joiner of a bootstrapped cluster likewise. A member that
// failed otherwise is not started again; with no other member running
// there is nothing to join: none is.
func TestFallenOutAsTheClusterForms(t *testing.T) {
	exchange := "2026-11-30 16:41:01 0 [ERROR] WSREP: ./gcs/src/gcs_core.cpp:core_handle_state_msg():1085: Failed to handle state message: -131 (State not recoverable)\n"
	for _, c := range []struct {
		name   string
		seqnos []int64
		views  bool
		alive  map[string]bool
		pass   int
		want   string
		ok     bool
	}{
		{"re-formed together", []int64{7, 7, 8}, true, map[string]bool{"db2": true, "db3": true}, 0,
			"forming:; db1; db2; db3; forming:; db1; db2; db3", true},
		{"bootstrapped", []int64{7, 7, 8}, false, map[string]bool{"db2": true, "db3": true}, 1,
			"db3 " + server.BootstrapFlag + "; db1 --wsrep-sst-donor=db3,; db2 --wsrep-sst-donor=db3,; db1; db2; db3", true},
		// db2 failed otherwise (nothing in its log a new start gets past): it stays down
		{"one failed otherwise", []int64{7, 7, 8}, true, map[string]bool{"db3": true}, 0,
			"forming:; db1; db2; db3; forming:; db1; db3", true},
		{"nothing to join", []int64{7, 7, 8}, true, nil, 0, "forming:; db1; db2; db3", false},
	} {
		f := galera3(c.seqnos...)
		f.alive, f.fail, f.pass = c.alive, 1, c.pass
		for i := range f.p.Nodes {
			n := &f.p.Nodes[i]
			n.LogFile = n.Dir + "/error.log"
			if c.views {
				_ = f.files.WriteFile(context.Background(), filepath.Join(n.DataDir, mariadb.Gvwstate), []byte("my_uuid: x\n"), 0)
			}
		}
		_ = f.files.WriteFile(context.Background(), f.p.Nodes[0].LogFile, []byte(exchange), 0)
		err := Start(context.Background(), f, f.p.Clusters[0], f.down(), "")
		if got := strings.Join(f.starts, "; "); got != c.want || (err == nil) != c.ok {
			t.Errorf("%s: %v, starts\n%s\nwant\n%s", c.name, err, got, c.want)
		}
	}
}

// TestForgetIfReversedKeepsTheOnlyCopy: a member that reversed history
// keeps its Galera state while no other member of its cluster runs (none
// could give it a copy); with one running it is removed.
func TestForgetIfReversedKeepsTheOnlyCopy(t *testing.T) {
	ctx := context.Background()
	f := galera3(5, 5, 5)
	n := &f.p.Nodes[0]
	n.LogFile = "/lab/db1/error.log"
	_ = f.files.WriteFile(ctx, n.LogFile, []byte("2026-12-01  4:18:19 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:group_post_state_exchange():453: Reversing history: 5 -> 4, this member has applied 1 more events than the primary component.Data loss is possible. Must abort.\n"), 0)
	f.alive = map[string]bool{}
	if forgot, err := ForgetIfReversed(ctx, f, n); forgot || err != nil {
		t.Errorf("alone: forgot %v, %v", forgot, err)
	}
	if _, err := f.files.ReadFile(ctx, "/lab/db1/data/"+mariadb.Grastate); err != nil {
		t.Errorf("alone: grastate.dat removed")
	}
	f.alive["db3"] = true
	if forgot, err := ForgetIfReversed(ctx, f, n); !forgot || err != nil {
		t.Errorf("db3 running: forgot %v, %v", forgot, err)
	}
	if _, err := f.files.ReadFile(ctx, "/lab/db1/data/"+mariadb.Grastate); err == nil {
		t.Errorf("db3 running: grastate.dat kept")
	}
}

// TestStartAfterAReversal: a stopped member whose last run held a write
// set its running cluster did not ("Reversing history") joins by a full
// state transfer at once, its Galera state removed before its first
// start, by a cluster's start and a single node's alike; one whose state
// is gone already is not said to lose it again.
func TestStartAfterAReversal(t *testing.T) {
	ctx := context.Background()
	reversal := "2026-12-01  6:29:41 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:group_post_state_exchange():453: Reversing history: 174482 -> 174481, this member has applied 1 more events than the primary component.Data loss is possible. Must abort.\n"
	for _, single := range []bool{false, true} {
		f := galera3(5, 5, 5)
		n := &f.p.Nodes[0]
		n.LogFile = "/lab/db1/error.log"
		_ = f.files.WriteFile(ctx, n.LogFile, []byte(reversal), 0)
		f.alive = map[string]bool{"db2": true, "db3": true}
		if single {
			if args := Rejoin(ctx, f, n); len(args) != 0 {
				t.Errorf("single: args %v", args)
			}
		} else if err := Start(ctx, f, f.p.Clusters[0], f.down()[:1], ""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.files.ReadFile(ctx, "/lab/db1/data/"+mariadb.Grastate); err == nil {
			t.Errorf("single %v: grastate.dat kept", single)
		}
		if !single && strings.Join(f.starts, "; ") != "db1" {
			t.Errorf("starts %q, want one start of db1 with no position", f.starts)
		}
		if forgot, err := ForgetIfReversed(ctx, f, n); forgot || err != nil {
			t.Errorf("single %v: its state gone already, forgot %v, %v", single, forgot, err)
		}
	}
}

// TestStartWaitsForItsDonors: a start returns once no member is still
// donating (a donor goes on after its joiner serves), not before.
func TestStartWaitsForItsDonors(t *testing.T) {
	f := galera3(5, 5, 5)
	f.alive = map[string]bool{"db2": true, "db3": true}
	f.donating = 5
	if err := Start(context.Background(), f, f.p.Clusters[0], f.down()[:1], ""); err != nil {
		t.Fatal(err)
	}
	if f.donating != 0 {
		t.Errorf("the start returned with a member still donating (%d probes left)", f.donating)
	}
}

// TestJoinerStartedAgainOnceForgotten: a joiner whose start failed is
// started again only once the running members' view no longer counts it
// (else it joins beside its dead self, and a second failure leaves the
// others two of four, without a primary component).
func TestJoinerStartedAgainOnceForgotten(t *testing.T) {
	f := galera3(5, 5, 5)
	n := &f.p.Nodes[2]
	n.LogFile = "/lab/db3/error.log"
	_ = f.files.WriteFile(context.Background(), n.LogFile, []byte("2026-11-27 20:50:12 0 [Warning] WSREP: Donor 693a7696-2439 is no longer in the group. State transfer cannot be completed, need to abort.\n"), 0)
	f.alive = map[string]bool{"db1": true, "db2": true}
	f.fail, f.ghosts = 1, 4
	if err := Start(context.Background(), f, f.p.Clusters[0], []*plan.Node{n}, ""); err != nil || len(f.starts) != 2 {
		t.Fatalf("%v, starts %q", err, f.starts)
	}
	if f.ghosts != 0 {
		t.Errorf("started again while the view still counted the failed joiner (%d reads left)", f.ghosts)
	}
}
