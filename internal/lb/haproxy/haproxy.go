// Package haproxy renders a load balancer's haproxy.cfg (pure) and reads
// its servers' states from the runtime API.
package haproxy

import (
	"embed"

	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/render"
	"github.com/hadrill/hadrill/internal/spec"
)

//go:embed templates/haproxy.cfg.tmpl
var templateFS embed.FS

// TemplateSource is the embedded haproxy.cfg template.
func TemplateSource() string {
	b, _ := templateFS.ReadFile("templates/haproxy.cfg.tmpl")
	return string(b)
}

// Backend is one database server behind the balancer.
type Backend struct {
	Name, Address string
	Port          int
}

// Config is everything haproxy.cfg.tmpl needs.
type Config struct {
	Lab, Name, Cluster, Mode string
	Address                  string
	Port, ReadPort           int
	CheckPort                int
	AdminSocket              string
	Backends                 []Backend
	// The agent endpoints that admit a server: "/" (Synced member of the
	// primary component) for Galera; "/primary" and "/replica" for a
	// primary cluster, so writes follow a promotion.
	WriteCheck, ReadCheck string
	Timing
	// MetricsPort, when set, serves HAProxy's own Prometheus exporter at
	// /metrics on the load balancer's address (a lab with monitoring).
	MetricsPort int
}

// Timing of health checks (HAProxy time format, e.g. 200ms).
type Timing struct {
	Inter, FastInter, DownInter, CheckTimeout string
	Rise, Fall                                int
	// Probes alone decide, as a cloud's load balancer's: real traffic's
	// failed connections do not take a server out, and a server taken out
	// keeps the sessions it has (only new ones go elsewhere).
	ProbesOnly bool
}

// DefaultTiming detects a dead or unhealthy node within about 0.5 s from
// checks alone (and at once from a failed connection), and takes one back
// (a promoted replica) within 0.3 s of its first good answer. A check's
// connection must be made within the interval (HAProxy: min of inter and
// timeout connect), so a crashed host fails it at once; its answer may
// take a second: an agent on a node saturated by its load answers late,
// not wrongly (it answers 503 at once for a server gone or paused, and
// keeps a busy one's last verdict for agent.BusyGrace), and a node whose
// agent is merely slow is not a node to shut the sessions of.
var DefaultTiming = timing(proxy.FastChecks)

// CloudTiming probes as Azure's load balancer does by default (its
// probe's interval 15 s, out after 2 probes unanswered, back after as
// many good ones; a server probed down gets no new connection and its
// established ones go on): the load balancer of document 000. A probe's
// connection must be made within a second (HAProxy's timeout connect);
// its answer may take 5 s.
var CloudTiming = timing(proxy.CloudChecks)

// TimingOf is the timing of a load balancer's checks.
func TimingOf(c spec.LBChecks) Timing { return timing(proxy.ChecksOf(c)) }

// timing is checks in HAProxy's words: checks that do not leave the
// decision to probes alone check twice as often while a server changes
// state (fastinter), and a server down as often as one up (downinter).
func timing(c proxy.Checks) Timing {
	t := Timing{Inter: c.Interval.String(), FastInter: (c.Interval / 2).String(), DownInter: c.Interval.String(),
		CheckTimeout: c.Timeout.String(), Rise: c.Rise, Fall: c.Fall, ProbesOnly: c.ProbesOnly}
	if c.ProbesOnly {
		t.FastInter = t.Inter
	}
	return t
}

// Render renders haproxy.cfg.
func Render(c Config) (string, error) {
	return render.Text("haproxy.cfg", TemplateSource(), c)
}
