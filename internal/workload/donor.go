package workload

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/spec"
)

// Donor is the health check's contract measured through a load balancer
// before a Galera cluster: where new connections land while one member
// is Synced, while it is Donor/Desynced (wsrep_desync=ON: the state a
// state transfer's donor is in), and once it is Synced again; and what
// its agent answered in each state. A check that admitted donors would
// let the load balancer send the donor its share.
type Donor struct {
	LB    string `json:"lb"`
	Node  string `json:"node"`
	Nodes int    `json:"nodes"` // the members behind the load balancer
	// Connections is how many new connections each phase opens through
	// the load balancer (each asks which member answered).
	Connections int `json:"connections"`
	// The share of each phase's connections the member answered.
	SyncedShare float64 `json:"synced_share"`
	DonorShare  float64 `json:"donor_share"`
	BackShare   float64 `json:"back_share"`
	// The member's state while desynced, as it reported it, and its
	// agent's HTTP status in each phase.
	DonorState  string `json:"donor_state"`
	SyncedProbe int    `json:"synced_probe"`
	DonorProbe  int    `json:"donor_probe"`
	BackProbe   int    `json:"back_probe"`
	// OutS is how long after the desync the last new connection landed on
	// the member (0: none did); BackS how long after it was Synced again
	// the first one did.
	OutS  float64 `json:"out_s"`
	BackS float64 `json:"back_s"`
}

// donorSettle is how long after the desync the donor phase starts: the
// load balancer's own time to see the health check change (HAProxy here:
// two failed checks 100 ms apart, each allowed 400 ms).
const donorSettle = 2 * time.Second

// DonorProbe runs the donor test on node, through the load balancer lb,
// n new connections a phase; wsrep_desync is set back (also on failure or
// interruption) and the member waited for until Synced.
func DonorProbe(ctx context.Context, l Lab, lb Endpoint, node string, n int, command []string, log io.Writer) (_ *ProbeOutcome, err error) {
	p := l.Plan()
	b, ok := p.LB(lb.Name)
	if !ok {
		return nil, fmt.Errorf("the donor test counts connections through a load balancer: %s is none (load balancers: %v)", lb.Name, lbNames(p))
	}
	var member *plan.Node
	members := 0
	for i := range p.Nodes {
		m := &p.Nodes[i]
		if m.Cluster != b.Cluster || m.Role != plan.RoleGalera {
			continue
		}
		members++
		if m.Name == node || (node == "" && member == nil) {
			member = m
		}
	}
	switch {
	case members == 0:
		return nil, fmt.Errorf("the donor test needs a Galera cluster behind %s; its cluster %s has no Galera member", b.Name, b.Cluster)
	case member == nil:
		return nil, fmt.Errorf("%s is not a member of %s's cluster %s", node, b.Name, b.Cluster)
	case b.Mode != spec.LBBalanced:
		return nil, fmt.Errorf("the donor test needs %s balanced over every member (mode balanced), not %s: a single writer sends nothing to the others in any state", b.Name, b.Mode)
	}
	run, err := NewRun(ctx, l, results.DonorProbe, command, map[string]any{"lb": b.Name, "node": member.Name, "connections": n})
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	r, err := donor(ctx, l, lb, member, n, log)
	if err != nil {
		return nil, err
	}
	r.LB, r.Nodes = b.Name, members
	return storeProbe(ctx, l, run, []Donor{r})
}

func lbNames(p *plan.Plan) []string {
	var out []string
	for _, b := range p.LoadBalancers {
		out = append(out, b.Name)
	}
	return out
}

func donor(ctx context.Context, l Lab, lb Endpoint, m *plan.Node, n int, log io.Writer) (Donor, error) {
	r := Donor{Node: m.Name, Connections: n}
	db, _ := lb.Open(l)
	defer db.Close()
	db.SetMaxIdleConns(0) // every query a new connection the load balancer places
	adm := l.Admin(m)
	defer adm.Close()
	agent := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return l.Dial(ctx, l.Plan().Client.Host, network, addr)
		}}}
	defer agent.CloseIdleConnections()
	probe := func() int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s:%d/", m.Address, m.AgentPort), nil)
		resp, err := agent.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// on answers which member a new connection through lb landed on
	on := func() (bool, error) {
		var name string
		if err := db.QueryRowContext(ctx, "SELECT @@wsrep_node_name").Scan(&name); err != nil {
			return false, fmt.Errorf("a connection through %s: %w", lb.Name, err)
		}
		return name == m.Name, nil
	}
	share := func(phase string) (float64, error) {
		hits := 0
		for range n {
			hit, err := on()
			if err != nil {
				return 0, err
			}
			if hit {
				hits++
			}
		}
		fmt.Fprintf(log, "%s: %d of %d new connections through %s landed on %s\n", phase, hits, n, lb.Name, m.Name)
		return float64(hits) / float64(n), nil
	}
	var err error
	if r.SyncedProbe = probe(); r.SyncedProbe != http.StatusOK {
		return r, fmt.Errorf("%s's agent answers %d before the test: the member must be Synced and admitted to start", m.Name, r.SyncedProbe)
	}
	if r.SyncedShare, err = share("synced"); err != nil {
		return r, err
	}
	fmt.Fprintf(log, "%s: SET GLOBAL wsrep_desync=ON (Donor/Desynced, as a state transfer's donor)\n", m.Name)
	if err := mariadb.Exec(ctx, adm, "SET GLOBAL wsrep_desync=ON"); err != nil {
		return r, fmt.Errorf("%s: %w", m.Name, err)
	}
	desynced := time.Now()
	resynced := false
	resync := func(ctx context.Context) error {
		if resynced {
			return nil
		}
		resynced = true
		return mariadb.Exec(ctx, adm, "SET GLOBAL wsrep_desync=OFF")
	}
	defer func() { _ = resync(context.WithoutCancel(ctx)) }()
	st, err := mariadb.Status(ctx, adm, "wsrep_local_state_comment")
	if err != nil {
		return r, fmt.Errorf("%s: %w", m.Name, err)
	}
	r.DonorState = st["wsrep_local_state_comment"]
	// new connections while the load balancer learns of it: the last
	// one on the member says how long it kept sending it some
	for time.Since(desynced) < donorSettle && ctx.Err() == nil {
		at := time.Since(desynced)
		hit, err := on()
		if err != nil {
			return r, err
		}
		if hit {
			r.OutS = at.Seconds()
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.DonorProbe = probe()
	if r.DonorShare, err = share("donor"); err != nil {
		return r, err
	}
	if err := resync(ctx); err != nil {
		return r, fmt.Errorf("%s: %w", m.Name, err)
	}
	if err := syncedAgain(ctx, adm, m.Name); err != nil {
		return r, err
	}
	back := time.Now()
	for r.BackS == 0 {
		hit, err := on()
		if err != nil {
			return r, err
		}
		if hit {
			r.BackS = max(time.Since(back).Seconds(), 0.001)
			break
		}
		if time.Since(back) > 30*time.Second {
			return r, fmt.Errorf("%s, Synced again, took no new connection through %s within 30 s", m.Name, lb.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.BackProbe = probe()
	r.BackShare, err = share("back")
	return r, err
}

// syncedAgain waits until the member says Synced (a desynced member
// catches up on what it queued first).
func syncedAgain(ctx context.Context, adm *sql.DB, name string) error {
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := mariadb.Status(ctx, adm, "wsrep_local_state_comment")
		if err == nil && st["wsrep_local_state_comment"] == "Synced" {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(end) {
			return fmt.Errorf("%s not Synced 60 s after wsrep_desync=OFF (%s, %v)", name, st["wsrep_local_state_comment"], err)
		}
	}
}
