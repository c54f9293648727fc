// Package provision makes a new lab's servers ready to start and to use:
// the generated credentials, every node's datadir (one initialised and
// copied here, each remote host's own, or a prepared backup's copy) with
// its logs placed and its Galera state seeded, the users, and the proof
// that the application user logs in from the client host; and, before
// any of it, whether this computer has room for the lab (CheckRoom). It
// sees the lab through the narrow Lab it is given.
package provision

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/galera/boot"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// Lab is what provisioning needs of a lab.
type Lab interface {
	Plan() *plan.Plan
	Host(name string) host.Host
	// Admin is an admin pool to a node's server; AppDB connects to addr
	// as the application user from the client host (both closed by the
	// caller).
	Admin(n *plan.Node) *sql.DB
	AppDB(addr string) (*sql.DB, error)
}

// Secrets writes the lab's generated credentials (0600, in a 0700
// directory) and the application's client file, which names the load
// balancer (or the first node) as the server.
func Secrets(p *plan.Plan) error {
	s := p.Secrets
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	for _, f := range []string{s.App, s.Check, s.Repl} {
		if err := os.WriteFile(f, []byte(mariadb.Password()+"\n"), 0o600); err != nil {
			return err
		}
	}
	app, _ := mariadb.ReadSecret(s.App)
	host, port := p.Nodes[0].Address, p.Nodes[0].Port
	if len(p.LoadBalancers) > 0 { // applications connect through the load balancer
		host, port = p.LoadBalancers[0].Address, p.LoadBalancers[0].Port
	}
	text, err := mariadb.RenderClient(p.Lab, plan.AppUser, app, host, port)
	if err != nil {
		return err
	}
	return os.WriteFile(s.Client, []byte(text), 0o600)
}

// Datadirs makes every node's datadir, each with its Galera state: a copy
// of the prepared backup fromBackup when given, else a new one. On this
// computer one datadir is initialised (as user) and copied to every node,
// so the nodes of a Galera cluster hold identical state, as after an SST;
// on remote hosts each initialises its own.
func Datadirs(ctx context.Context, l Lab, user, fromBackup, cache string) error {
	if l.Plan().Mode == plan.ModeSSH {
		return remoteDatadirs(ctx, l, fromBackup)
	}
	p := l.Plan()
	tmpl := fromBackup
	if tmpl == "" {
		var err error
		if tmpl, err = Template(ctx, cache, user); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range p.Nodes {
		n := &p.Nodes[i]
		g.Go(func() error {
			if err := placeDatadir(gctx, l, n, tmpl); err != nil {
				return err
			}
			if err := seed(gctx, l, n); err != nil {
				return err
			}
			return durable(n)
		})
	}
	return g.Wait()
}

// Template is an initialised datadir every node's is copied from, made by
// mariadb-install-db once for this server binary, user and redo log size
// and kept in cache (a lab's home's cache directory): installing takes
// half a second of every up otherwise. It is made beside and renamed into
// place, so a template found is whole (two ups at once: the second's is
// dropped). One made for another binary, user or redo log stays beside
// (labs of another user may still copy it), about 100 MB each.
func Template(ctx context.Context, cache, user string) (string, error) {
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		return "", fmt.Errorf("mariadbd: %w", err)
	}
	st, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	argv := mariadb.InstallArgs("DATADIR", user, user == "root", plan.RedoLog)
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d %q", bin, st.Size(), st.ModTime().UnixNano(), argv)))
	dir := filepath.Join(cache, fmt.Sprintf("datadir-%x", sum[:8]))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, ".datadir-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := mariadb.InstallDB(ctx, filepath.Join(tmp, "datadir"), user, plan.RedoLog); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, "datadir"), dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil { // another up made it meanwhile
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// durable flushes what placing a node's datadir wrote onto its volumes, as
// a provisioner does before a server starts on what it wrote: a power cut
// of the node's disks (a disk fault's lose-unsynced) then drops what the
// server had not flushed, never the files it was given. A node without
// volumes has nothing a power cut could drop.
func durable(n *plan.Node) error {
	if len(n.Volumes) == 0 {
		return nil
	}
	seen := map[uint64]bool{}
	for _, dir := range []string{n.DataDir, n.RedoDir, n.BinlogDir} {
		if dir == "" {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		if seen[st.Dev] {
			continue
		}
		seen[st.Dev] = true
		if err := syncfs(dir); err != nil {
			return fmt.Errorf("%s: flushing %s: %w", n.Name, dir, err)
		}
	}
	return nil
}

// syncfs flushes the file system holding dir.
func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// placeDatadir makes n's datadir a copy of the directory src here (a
// datadir template, a prepared backup): copied where the host's files are
// this computer's (reflinks where the file system can, the redo log moved
// onto its volume), sent over the connection to a remote host.
func placeDatadir(ctx context.Context, l Lab, n *plan.Node, src string) error {
	if l.Plan().Mode == plan.ModeSSH {
		if err := host.SendDir(ctx, l.Host(n.Host), src, n.DataDir); err != nil {
			return err
		}
		return PlaceLogs(ctx, l.Plan(), l.Host(n.Host), n)
	}
	if err := os.MkdirAll(n.Dir, 0o755); err != nil { // its datadir may be on a volume elsewhere
		return err
	}
	if err := mariadb.CopyDatadir(ctx, src, n.DataDir); err != nil {
		return err
	}
	return PlaceLogs(ctx, l.Plan(), l.Host(n.Host), n)
}

// PlaceLogs gives a node's new datadir what goes elsewhere: here its redo
// log moved onto its volume and the directories of its binary logs and
// temporary files made; on a remote host, which has no volumes (the
// datadir holds its logs), its tmpdir (a lab made before nodes had their
// own has none).
func PlaceLogs(ctx context.Context, p *plan.Plan, h host.Host, n *plan.Node) error {
	if p.Mode != plan.ModeSSH {
		return mariadb.PlaceLogs(ctx, n.DataDir, n.RedoDir, n.BinlogDir, n.TmpDir)
	}
	if n.TmpDir == "" {
		return nil
	}
	_, err := h.Run(ctx, []string{"mkdir", "-p", n.TmpDir}, nil)
	return err
}

// BootstrapLoners are the server options of the node of each one-node
// Galera cluster: it has no peer to re-form a seeded view with, so it
// bootstraps.
func BootstrapLoners(p *plan.Plan) map[string][]string {
	extra := map[string][]string{}
	for _, c := range p.Clusters {
		if c.Kind == spec.KindGalera && len(c.Nodes) == 1 {
			extra[c.Nodes[0]] = []string{server.BootstrapFlag}
		}
	}
	return extra
}

// seed gives a Galera node the cluster's state and its last primary view.
func seed(ctx context.Context, l Lab, n *plan.Node) error {
	p := l.Plan()
	if n.Kind != spec.KindGalera {
		return nil
	}
	c, ok := p.Cluster(n.Cluster)
	if !ok {
		return fmt.Errorf("%s: cluster %s not in plan", n.Name, n.Cluster)
	}
	return boot.Seed(ctx, l.Host(n.Host), p, n, c.StateUUID, 0)
}

// Users are made once per Galera cluster on its first node (Galera
// replicates it to the others); every other server gets its own, kept out
// of its binary log (replication then starts from identical, empty GTID
// positions).
func Users(ctx context.Context, l Lab) error {
	p := l.Plan()
	s := p.Secrets
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
	for _, c := range p.Clusters {
		names, local := c.Nodes, true
		if c.Kind == spec.KindGalera {
			names, local = names[:1], false
		}
		for _, name := range names {
			n, _ := p.Node(name)
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

// CheckAppLogins proves every node accepts the application user over TCP
// from the client host: "up" means an application can connect.
func CheckAppLogins(ctx context.Context, l Lab) error {
	p := l.Plan()
	g, gctx := errgroup.WithContext(ctx)
	for i := range p.Nodes {
		n := &p.Nodes[i]
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
				return fmt.Errorf("%s: the application user cannot connect from %s: %w", n.Name, p.Client.Host, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// remoteDatadirs initialises each node's datadir on its own host (a
// host's files are its own: there is nothing to copy from), or sends it
// the prepared backup a restore starts from, and gives it its Galera
// state and the health check's password.
func remoteDatadirs(ctx context.Context, l Lab, fromBackup string) error {
	p := l.Plan()
	check, err := mariadb.ReadSecret(p.Secrets.Check)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { // the application's credentials, where its client runs
		b, err := os.ReadFile(p.Secrets.Client)
		if err != nil {
			return err
		}
		return l.Host(p.Client.Host).WriteFile(gctx, p.Client.DefaultsFile, b, 0o600)
	})
	for i := range p.Nodes {
		n := &p.Nodes[i]
		g.Go(func() error {
			h := l.Host(n.Host)
			if err := h.WriteFile(gctx, n.CheckSecret, []byte(check+"\n"), 0o600); err != nil {
				return err
			}
			if err := h.RemoveAll(gctx, n.DataDir); err != nil { // a datadir half made by an interrupted try
				return err
			}
			if fromBackup != "" {
				if err := placeDatadir(gctx, l, n, fromBackup); err != nil {
					return fmt.Errorf("%s: the backup: %w", n.Name, err)
				}
			} else if _, err := h.Run(gctx, mariadb.InstallArgs(n.DataDir, h.SocketUser(), true, plan.RedoLog), nil); err != nil {
				return fmt.Errorf("%s: mariadb-install-db: %w", n.Name, err)
			} else if err := PlaceLogs(gctx, p, h, n); err != nil {
				return err
			}
			return seed(gctx, l, n)
		})
	}
	return g.Wait()
}
