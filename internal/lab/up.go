package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/galera/boot"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// UpOptions say what to bring up.
type UpOptions struct {
	Name      string
	Spec      *spec.Spec
	SpecGiven bool // the user named a preset or file (else: default, or the stored spec)
	Log       io.Writer
	// FromBackup, when set, is a prepared backup every node's datadir is
	// copied from (instead of a freshly initialised one).
	FromBackup string
	// Inventory, when set, places the lab's hosts on its machines (over
	// SSH); they are checked (preflight) before anything is made.
	Inventory *inventory.Resolved
	// Hold, when set, keeps the lab's writer lock once it is up and puts
	// its release there (a study holds its labs' for as long as they run:
	// no other command changes or removes them meanwhile; DownHeld).
	Hold *func()
	// Wait is how long to wait for a lab busy with another command (0:
	// refuse at once).
	Wait time.Duration
}

// Up creates a lab, or starts an existing stopped one, and returns when
// every node serves. On any failure (or ctx cancelled) it removes what it
// created, so nothing is left half-made.
func Up(ctx context.Context, home string, o UpOptions) (*Lab, error) {
	if err := plan.CheckLabName(o.Name); err != nil {
		return nil, err
	}
	unlock, err := state.Lock(home, o.Name, state.Writer, o.Wait)
	if err != nil {
		return nil, err
	}
	l, err := up(ctx, home, o)
	if err == nil && o.Hold != nil {
		*o.Hold = unlock
	} else {
		unlock()
	}
	return l, err
}

// up is Up under the lab's writer lock.
func up(ctx context.Context, home string, o UpOptions) (*Lab, error) {
	var err error
	if existing, err := state.Load(home, o.Name); err == nil {
		return startExisting(ctx, home, existing, o)
	}
	f := facts.Machine()
	if o.Inventory != nil {
		if f, err = remoteFacts(ctx, o.Spec, o.Name, o.Inventory, o.Log); err != nil {
			return nil, err
		}
	}
	p, err := plan.Build(o.Spec, o.Name, home, f)
	if err != nil {
		return nil, err
	}
	if o.Inventory == nil {
		if err := facts.Preflight(p, f); err != nil {
			return nil, err
		}
		if err := checkRoom(p, home, o.Log); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(p.Dir); err == nil {
		return nil, hderr.User("--name: %s exists but holds no lab.json; remove it or run `hadrill down --name %s`", p.Dir, o.Name)
	}
	l := newLab(home, &state.Lab{Plan: p, Inventory: o.Inventory}, o.Log)
	l.fromBackup = o.FromBackup
	if err := l.Prov.Claim(); err != nil {
		return nil, err
	}
	if err := l.save(state.Creating); err != nil { // first: down can always find what follows
		return nil, err
	}
	if err := l.create(ctx); err != nil {
		l.logf("up failed; removing lab %s", p.Lab)
		if derr := l.destroy(context.Background(), false); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	return l, l.save(state.Running)
}

func startExisting(ctx context.Context, home string, st *state.Lab, o UpOptions) (*Lab, error) {
	if o.SpecGiven && !st.Plan.BuiltFrom(o.Spec) {
		return nil, hderr.User("--name: lab %q already exists with another topology; choose another --name or remove it with `hadrill down --name %s`", o.Name, o.Name)
	}
	l := newLab(home, st, o.Log)
	if st.Status == state.Creating {
		return nil, hderr.User("--name: lab %q was interrupted while being created; remove it with `hadrill down --name %s`", o.Name, o.Name)
	}
	if err := l.startAll(ctx); err != nil {
		return nil, err
	}
	if _, err := l.wan.Check(ctx, false); err != nil {
		return nil, err
	}
	if _, err := disk.Check(ctx, l.p, l.Prov.Host, l.Log); err != nil {
		return nil, err
	}
	return l, l.save(state.Running)
}

func (l *Lab) create(ctx context.Context) error {
	t0 := time.Now()
	p := l.p
	if err := l.writeSecrets(); err != nil {
		return err
	}
	if p.Disks != nil { // the datadirs are copied onto the volumes: mounted first
		if err := l.Prov.Setup(ctx); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return l.Prov.Setup(gctx) })
	if p.Mode == plan.ModeSSH {
		g.Go(func() error { return l.initRemoteDatadirs(gctx) })
	} else {
		g.Go(func() error { return l.initDatadirs(gctx) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := l.wan.Ensure(ctx); err != nil {
		return err
	}
	l.logf("hosts and datadirs ready (%.1fs); starting %d servers", time.Since(t0).Seconds(), len(p.Nodes))
	if err := l.startForming(ctx, l.Nodes(nil), l.bootstrapLoners()); err != nil {
		return err
	}
	if err := l.Replication().SetGTIDDomains(ctx); err != nil {
		return err
	}
	l.logf("all servers ready (%.1fs); creating users", time.Since(t0).Seconds())
	if err := l.createUsers(ctx); err != nil {
		return err
	}
	if err := l.Replication().Ensure(ctx); err != nil {
		return err
	}
	if err := l.checkAppLogins(ctx); err != nil {
		return err
	}
	if len(p.LoadBalancers) > 0 {
		l.logf("servers accept the application user (%.1fs); starting health agents and load balancers", time.Since(t0).Seconds())
	}
	if err := l.ensureDaemons(ctx); err != nil {
		return err
	}
	if _, err := l.wan.Check(ctx, false); err != nil {
		return err
	}
	if _, err := disk.Check(ctx, p, l.Prov.Host, l.Log); err != nil {
		return err
	}
	l.logf("lab %s up in %.1fs", p.Lab, time.Since(t0).Seconds())
	return ctx.Err()
}

func (l *Lab) writeSecrets() error {
	s := l.p.Secrets
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	for _, f := range []string{s.App, s.Check, s.Repl} {
		if err := os.WriteFile(f, []byte(mariadb.Password()+"\n"), 0o600); err != nil {
			return err
		}
	}
	app, _ := mariadb.ReadSecret(s.App)
	host, port := l.p.Nodes[0].Address, l.p.Nodes[0].Port
	if len(l.p.LoadBalancers) > 0 { // applications connect through the load balancer
		host, port = l.p.LoadBalancers[0].Address, l.p.LoadBalancers[0].Port
	}
	text, err := mariadb.RenderClient(l.p.Lab, plan.AppUser, app, host, port)
	if err != nil {
		return err
	}
	return os.WriteFile(s.Client, []byte(text), 0o600)
}

// initDatadirs initialises one datadir and copies it to every node: the
// nodes of a Galera cluster then hold identical state, as after an SST.
func (l *Lab) initDatadirs(ctx context.Context) error {
	tmpl := l.fromBackup
	if tmpl == "" {
		tmpl = filepath.Join(l.p.Dir, "datadir.template")
		if err := mariadb.InstallDB(ctx, tmpl, l.Facts.User, plan.RedoLog); err != nil {
			return err
		}
		defer os.RemoveAll(tmpl)
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range l.p.Nodes {
		n := &l.p.Nodes[i]
		g.Go(func() error {
			if err := l.placeDatadir(gctx, n, tmpl); err != nil {
				return err
			}
			return l.seed(gctx, n)
		})
	}
	return g.Wait()
}

// placeDatadir makes n's datadir a copy of the directory src here (a
// datadir template, a prepared backup): copied where the host's files are
// this computer's (reflinks where the file system can, the redo log moved
// onto its volume), sent over the connection to a remote host.
func (l *Lab) placeDatadir(ctx context.Context, n *plan.Node, src string) error {
	if l.p.Mode == plan.ModeSSH {
		if err := host.SendDir(ctx, l.Prov.Host(n.Host), src, n.DataDir); err != nil {
			return err
		}
		return l.placeLogs(ctx, n)
	}
	if err := os.MkdirAll(n.Dir, 0o755); err != nil { // its datadir may be on a volume elsewhere
		return err
	}
	if err := mariadb.CopyDatadir(ctx, src, n.DataDir); err != nil {
		return err
	}
	return l.placeLogs(ctx, n)
}

// placeLogs gives a node's new datadir what goes elsewhere: here its redo
// log moved onto its volume and the directories of its binary logs and
// temporary files made; on a remote host, which has no volumes (the
// datadir holds its logs), its tmpdir (a lab made before nodes had their
// own has none).
func (l *Lab) placeLogs(ctx context.Context, n *plan.Node) error {
	if l.p.Mode != plan.ModeSSH {
		return mariadb.PlaceLogs(ctx, n.DataDir, n.RedoDir, n.BinlogDir, n.TmpDir)
	}
	if n.TmpDir == "" {
		return nil
	}
	_, err := l.Prov.Host(n.Host).Run(ctx, []string{"mkdir", "-p", n.TmpDir}, nil)
	return err
}

// bootstrapLoners: the node of a one-node Galera cluster has no peer to
// re-form a seeded view with, so it bootstraps.
func (l *Lab) bootstrapLoners() map[string][]string {
	extra := map[string][]string{}
	for _, c := range l.p.Clusters {
		if c.Kind == spec.KindGalera && len(c.Nodes) == 1 {
			extra[c.Nodes[0]] = []string{server.BootstrapFlag}
		}
	}
	return extra
}

// seed gives a Galera node the cluster's state and its last primary view.
func (l *Lab) seed(ctx context.Context, n *plan.Node) error {
	if n.Kind != spec.KindGalera {
		return nil
	}
	var members []string
	for _, c := range l.p.Clusters {
		if c.Name != n.Cluster {
			continue
		}
		for _, m := range c.Nodes {
			mn, _ := l.p.Node(m)
			members = append(members, mn.UUID)
		}
		return boot.Seed(ctx, l.Prov.Host(n.Host), n, c.StateUUID, 0, members)
	}
	return fmt.Errorf("%s: cluster %s not in plan", n.Name, n.Cluster)
}

// createUsers runs once per Galera cluster on its first node (Galera
// replicates it to the others); every other server gets its own, kept out
// of its binary log (replication then starts from identical, empty GTID
// positions).
func (l *Lab) createUsers(ctx context.Context) error {
	s := l.p.Secrets
	var u mariadb.Users
	var err error
	u.App, u.Check, u.Repl = plan.AppUser, plan.CheckUser, plan.ReplUser
	if u.AppPassword, err = mariadb.ReadSecret(s.App); err != nil {
		return err
	}
	if u.CheckPassword, err = mariadb.ReadSecret(s.Check); err != nil {
		return err
	}
	if u.ReplPassword, err = mariadb.ReadSecret(s.Repl); err != nil {
		return err
	}
	for _, c := range l.p.Clusters {
		names, local := c.Nodes, true
		if c.Kind == spec.KindGalera {
			names, local = names[:1], false
		}
		for _, name := range names {
			n, _ := l.p.Node(name)
			db := l.Admin(n)
			err := mariadb.CreateUsers(ctx, db, u, local)
			db.Close()
			if err != nil {
				return fmt.Errorf("%s: create users: %w", name, err)
			}
		}
	}
	return nil
}

// checkAppLogins proves every node accepts the application user over TCP
// from the client host: "up" means an application can connect.
func (l *Lab) checkAppLogins(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for i := range l.p.Nodes {
		n := &l.p.Nodes[i]
		g.Go(func() error {
			db, err := l.AppDB(fmt.Sprintf("%s:%d", n.Address, n.Port))
			if err != nil {
				return err
			}
			defer db.Close()
			deadline := time.Now().Add(10 * time.Second)
			for {
				qctx, cancel := context.WithTimeout(gctx, 2*time.Second)
				err = db.PingContext(qctx)
				cancel()
				if err == nil || time.Now().After(deadline) || gctx.Err() != nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				return fmt.Errorf("%s: the application user cannot connect from %s: %w", n.Name, l.p.Client.Host, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// NodeRoom is about what a node's files take once made: its redo log and
// Galera cache (64M each) and the system tables, with room to start.
const NodeRoom = 256 << 20

// checkRoom refuses a lab whose nodes' files or disks' images would not fit
// the file system that holds them (bad input: nothing is made), and says
// so when the images may fill it.
func checkRoom(p *plan.Plan, home string, log io.Writer) error {
	free, err := disk.Free(home)
	if err != nil {
		return fmt.Errorf("free space in %s: %w", home, err)
	}
	if need := int64(len(p.Nodes)+1) * NodeRoom; p.Disks == nil && free < need {
		return hderr.User("--home: %s free on the file system holding %s; a lab of %d node(s) needs about %s (each node's redo log, Galera cache and "+
			"system tables): free some space or give another --home", spec.FormatSize(free), home, len(p.Nodes), spec.FormatSize(need))
	}
	if p.Disks == nil {
		return nil
	}
	if free, err = disk.Free(p.Disks.Images); err != nil {
		return fmt.Errorf("free space for the disks' images: %w", err)
	}
	refuse, warn := disk.Room(p, free)
	if refuse != "" {
		return hderr.User("storage (the disks' sizes): %s", refuse)
	}
	if warn != "" && log != nil {
		fmt.Fprintf(log, "warning: %s\n", warn)
	}
	return nil
}
