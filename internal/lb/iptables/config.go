// Package iptables is a load balancer with no process on the data path:
// the host's kernel spreads each new connection over the servers found
// healthy, by iptables DNAT rules drawn at random (-m statistic, as
// kube-proxy's iptables mode), and takes its replies back through the
// host (SNAT to the host's own address, as HAProxy's connections come
// from it). A prober beside the rules (hadrill lb-iptables, Run) asks
// each server's health agent as HAProxy's checks would, rewrites the
// rules when a server goes out or comes back, logs the change, and
// answers on an admin socket how it sees its servers. Connections keep
// the server they were given (the kernel's connection tracking), so a
// server taken out loses only new connections: the probes-only behaviour
// of a cloud's layer-4 load balancer (Azure's Internal Load Balancer).
package iptables

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/spec"
)

// Config is what an instance's prober reads (its configuration file,
// JSON; rendered from the plan by Kind.Config).
type Config struct {
	Lab     string `json:"lab"`
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	// Address is where clients connect (a pair's virtual IP); Source the
	// host's own address, which the servers see connections come from.
	Address string `json:"address"`
	Source  string `json:"source"`
	// Groups are the ports clients connect to, each with the servers'
	// check that admits a server to it.
	Groups   []Group   `json:"groups"`
	Backends []Backend `json:"backends"`
	// CheckPort is the health agents' port.
	CheckPort int    `json:"check_port"`
	Timing    Timing `json:"timing"`
	// AdminSocket answers how the prober sees its servers (JSON).
	AdminSocket string `json:"admin_socket"`
	// Chain names the NAT chains: Chain (DNAT, from PREROUTING and
	// OUTPUT) and Chain+"-S" (SNAT, from POSTROUTING).
	Chain string `json:"chain"`
	// Dir keeps what the prober changed on the host (ip_forward's value
	// before it), so it is put back when the prober ends or is killed.
	Dir string `json:"dir"`
}

// Group is a port of the load balancer and the servers it sends to.
type Group struct {
	Name  string `json:"name"` // writes, reads
	Port  int    `json:"port"`
	Check string `json:"check"` // the agent's path that admits a server
	// First sends every new connection to the first healthy server in
	// the backends' order (single-writer: the others are its backups).
	First bool `json:"first,omitempty"`
}

// Backend is a database server behind the load balancer.
type Backend struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Port    int    `json:"port"`
}

// Timing is how the prober checks: every Interval, a probe failing when
// its connection is not made within min(Interval, Timeout) or it is not
// answered 200 within Timeout; a server out after Fall failures in a row,
// back after Rise successes.
type Timing struct {
	Interval Duration `json:"interval"`
	Timeout  Duration `json:"timeout"`
	Rise     int      `json:"rise"`
	Fall     int      `json:"fall"`
}

// Duration is a time.Duration written as "200ms" in JSON.
type Duration time.Duration

// MarshalJSON writes d as Go's duration text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads Go's duration text.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// TimingOf is the timing of a load balancer's checks (proxy.ChecksOf:
// the same as HAProxy's for the same setting).
func TimingOf(c spec.LBChecks) Timing {
	pc := proxy.ChecksOf(c)
	return Timing{Interval: Duration(pc.Interval), Timeout: Duration(pc.Timeout), Rise: pc.Rise, Fall: pc.Fall}
}

// ChainOf names the chains of a lab's load balancer: HDLB- and a hash of
// the two names (a chain's name holds at most 28 characters, and a
// machine may hold instances of several labs).
func ChainOf(lab, lb string) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s", lab, lb)
	return fmt.Sprintf("HDLB-%08x", h.Sum32())
}

// Load reads a prober's configuration file and checks it, naming every
// problem at once.
func Load(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, c.Check()
}

// Check names every field of c that the prober cannot run with.
func (c Config) Check() error {
	var problems []string
	add := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	if c.Address == "" || c.Source == "" {
		add("address and source: both required (where clients connect, the host's own address)")
	}
	if len(c.Groups) == 0 || len(c.Backends) == 0 {
		add("groups and backends: at least one of each")
	}
	for i, g := range c.Groups {
		if g.Port < 1 || g.Port > 65535 || g.Check == "" {
			add("groups[%d]: a port of 1 to 65535 and a check path, got %d and %q", i, g.Port, g.Check)
		}
	}
	for i, b := range c.Backends {
		if b.Name == "" || b.Address == "" || b.Port < 1 || b.Port > 65535 {
			add("backends[%d]: a name, an address and a port of 1 to 65535", i)
		}
	}
	t := c.Timing
	if t.Interval <= 0 || t.Timeout <= 0 || t.Rise < 1 || t.Fall < 1 {
		add("timing: an interval and a timeout above 0, rise and fall of at least 1, got %v, %v, %d, %d",
			time.Duration(t.Interval), time.Duration(t.Timeout), t.Rise, t.Fall)
	}
	if c.CheckPort < 1 || c.AdminSocket == "" || c.Chain == "" || c.Dir == "" {
		add("check_port, admin_socket, chain and dir: all required")
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("load balancer configuration: %s", strings.Join(problems, "; "))
}
