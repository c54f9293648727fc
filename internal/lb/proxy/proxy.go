// Package proxy is what a load balancer's proxy software is to hadrill: a
// Kind (the daemon on each host, its configuration, how it sees its
// servers, whether it answers) and the neutral record of a server as it
// sees it. HAProxy (package haproxy) is a process on the data path; the
// kernel's iptables (package iptables) a prober that rewrites DNAT rules,
// with no process on it. Another (ProxySQL, MaxScale) is a package
// implementing Kind beside them, a line in lb's kinds and a value of
// spec.LBKind.
package proxy

import (
	"context"
	"net"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// ServerState is one server behind the proxy as it sees it.
type ServerState struct {
	Proxy    string `json:"proxy"` // the group it is in: "writes", "reads"
	Name     string `json:"name"`
	Status   string `json:"status"` // UP, DOWN, MAINT, "UP 1/2" (going down), "DOWN 1/2" (going up), ...
	Backup   bool   `json:"backup"`
	Sessions int    `json:"sessions"`
	Serving  bool   `json:"serving"` // takes new connections now
}

// Dial connects from an instance's host (its admin socket: "unix").
type Dial func(ctx context.Context, network, addr string) (net.Conn, error)

// Kind is a load balancer's proxy software.
type Kind interface {
	// Name is how status and logs call it ("haproxy").
	Name() string
	// Version is the command that prints its version on its first line
	// (a run records it).
	Version() []string
	// Daemon is the proxy on an instance's host, in the foreground so the
	// supervisor holds its pid (exe: hadrill on that host, for a kind
	// whose daemon is hadrill's own).
	Daemon(in *plan.LBInstance, exe string) host.Daemon
	// Config is the text of an instance's configuration file (pure): the
	// load balancer's cluster's nodes, checked through their health
	// agents.
	Config(p *plan.Plan, b *plan.LB, in *plan.LBInstance) (string, error)
	// Servers is how the proxy of an instance sees its servers now, asked
	// through its admin socket.
	Servers(ctx context.Context, dial Dial, in *plan.LBInstance) ([]ServerState, error)
	// Alive says whether the proxy behind an admin socket answers (a
	// pair's keepalived checks it).
	Alive(ctx context.Context, socket string) error
	// Events are the changes an instance's log file (its LogFile) holds
	// of where it sends connections, in order (pure).
	Events(log []byte) []Event
}

// Residue is a kind whose daemon, killed, leaves something on its host
// that a crashed machine would not keep (a rebooted kernel's firewall
// is empty): the commands that take it away, run on the host after the
// kill.
type Residue interface {
	Residue(p *plan.Plan, b *plan.LB, in *plan.LBInstance) [][]string
}

// Checks is how a load balancer checks its servers' health agents,
// whatever its kind: every Interval, a check answered within Timeout, a
// server out after Fall failures in a row and back after Rise good ones;
// ProbesOnly: the checks alone decide, and a server taken out keeps its
// sessions (a cloud's load balancer).
type Checks struct {
	Interval, Timeout time.Duration
	Rise, Fall        int
	ProbesOnly        bool
}

// FastChecks (checks: fast, the default) take a dead or unhealthy node out
// within about 0.5 s; CloudChecks (checks: cloud) probe as Azure's load
// balancer does by default: every 15 s, a probe answered within 5 s, out
// after 2 unanswered, back after 2 good ones, sessions kept.
var (
	FastChecks  = Checks{Interval: 200 * time.Millisecond, Timeout: time.Second, Rise: 2, Fall: 2}
	CloudChecks = Checks{Interval: 15 * time.Second, Timeout: 5 * time.Second, Rise: 2, Fall: 2, ProbesOnly: true}
)

// ChecksOf is a load balancer's checks (fast when the lab was recorded
// before labs chose).
func ChecksOf(c spec.LBChecks) Checks {
	if c == spec.LBChecksCloud {
		return CloudChecks
	}
	return FastChecks
}

// Event is a change the proxy logged in where it sends connections: a
// server taken out ("down"), taken back ("up"), or a group of servers
// left with none ("no server").
type Event struct {
	At       time.Time `json:"at"`
	Instance string    `json:"instance,omitempty"` // the host of the instance that logged it (set by its reader)
	Proxy    string    `json:"proxy"`              // the group: "writes", "reads"
	Server   string    `json:"server,omitempty"`
	What     string    `json:"what"`               // down, up, no server
	Reason   string    `json:"reason,omitempty"`   // as the proxy gave it
	Sessions int       `json:"sessions,omitempty"` // a server marked down: the sessions it had (shut with it)
}

// Event kinds.
const (
	Down     = "down"
	Up       = "up"
	NoServer = "no server"
)
