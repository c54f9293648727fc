// Package keepalived renders the keepalived.conf of each host of a
// redundant load balancer pair (pure): VRRP version 3 over unicast between
// the two hosts, a virtual IP that moves to the host whose proxy answers.
package keepalived

import (
	"embed"

	"github.com/hadrill/hadrill/internal/render"
)

//go:embed templates/keepalived.conf.tmpl
var templateFS embed.FS

// TemplateSource is the embedded keepalived.conf template.
func TemplateSource() string {
	b, _ := templateFS.ReadFile("templates/keepalived.conf.tmpl")
	return string(b)
}

// Config is one host's keepalived.conf.
type Config struct {
	Lab, LB, Host string
	Interface     string // the NIC holding the address (eth0: the application network)
	Self, Peer    string // this host's and the other host's addresses
	VIP           string
	Prefix        int // the network's prefix length
	RouterID      int // virtual_router_id, 1 to 255, the same on both hosts
	Priority      int // the first host is preferred at start-up
	// Advert is the advertisement interval in seconds (VRRPv3:
	// centiseconds allowed); the backup takes over after three silent ones.
	Advert string
	// Proxy is the load balancer's proxy software ("haproxy"), Check the
	// command that says whether this host's answers.
	Proxy, Check string
}

// Advert is the pair's advertisement interval: a backup takes the address
// about 0.35 s after the master's host dies (3 × 0.1 s plus skew).
const Advert = "0.1"

// Render renders keepalived.conf.
func Render(c Config) (string, error) {
	return render.Text("keepalived.conf", TemplateSource(), c)
}
