// Package mariadb knows MariaDB and Galera: it renders my.cnf and Galera state
// files from embedded templates (pure), initialises datadirs, talks to servers.
package mariadb

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	tmpl "github.com/hadrill/hadrill/internal/render"
)

//go:embed templates
var templateFS embed.FS

// TemplateNames lists every embedded template, e.g. "my.cnf.tmpl", "profiles/durable.cnf".
func TemplateNames() []string {
	var names []string
	_ = fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, "templates/"))
		}
		return nil
	})
	sort.Strings(names)
	return names
}

// TemplateSource returns the text of one embedded template.
func TemplateSource(name string) (string, error) {
	b, err := templateFS.ReadFile("templates/" + name)
	if err != nil {
		return "", fmt.Errorf("unknown template %q (known: %s)", name, strings.Join(TemplateNames(), ", "))
	}
	return string(b), nil
}

func render(name string, data any) (string, error) {
	src, err := TemplateSource(name)
	if err != nil {
		return "", err
	}
	return tmpl.Text(name, src, data)
}

// ServerConfig is everything my.cnf.tmpl needs for one node.
type ServerConfig struct {
	Lab, Name, Cluster, ClusterName, Kind, Profile string
	User                                           string // OS user to run as; empty when not root
	DataDir, Socket, PidFile, LogFile              string
	RedoDir, BinlogDir, TmpDir                     string // elsewhere than the datadir ("": the datadir, or the machine's tmpdir)
	SSTLogDir                                      string // where the SST script archives its logs (Galera)
	Address                                        string // clients reach the server here
	ClusterAddress                                 string // its peers reach it here (Galera, IST/SST, replication); empty: Address
	Port, GaleraPort, ISTPort, SSTPort, ServerID   int
	BufferPool, RedoLog, GCache                    string
	GaleraLib                                      string
	Peers                                          string // host:port,host:port
	ProviderOptions                                string // wsrep_provider_options (see ProviderOptions)
	Overrides                                      []string
	// GTIDDomain is gtid_domain_id: the domain of this server's own writes
	// (shared by the nodes of a primary cluster, so a promoted replica
	// continues the sequence). WsrepGTIDDomain is the domain of a Galera
	// cluster's replicated write sets, the same on every member.
	GTIDDomain, WsrepGTIDDomain   int
	SemiSyncMaster, SemiSyncSlave bool
	NoBinlog                      bool // binary log off (and Galera's GTID mode with it)
	AckTimeoutMs                  int64
	// Ring: the server is one of RingSize writable primaries replicating
	// into each other (RingPosition from 1): its AUTO_INCREMENT values step
	// by RingSize from RingPosition, so inserts on two never take one key.
	RingSize, RingPosition int
}

// ProviderOptions is a Galera node's wsrep_provider_options: it listens
// only on its own address, keeps a lab-sized gcache, and saves its primary
// view (pc.recovery) so a fully crashed cluster can re-form by itself.
// Detection adds the options of a failure detection (FastDetection,
// WANDetection; "" keeps Galera's). A segment ≥ 0 places the node in a
// gmcast segment (one per region).
func ProviderOptions(address string, galeraPort, istPort int, gcache string, detection string, segment int) string {
	opts := fmt.Sprintf("gmcast.listen_addr=tcp://%s:%d;ist.recv_addr=%s:%d;gcache.size=%s;pc.recovery=true",
		address, galeraPort, address, istPort, gcache)
	if segment >= 0 {
		opts += fmt.Sprintf(";gmcast.segment=%d", segment)
	}
	if detection != "" {
		opts += ";" + detection
	}
	return opts
}

// FastDetection are the provider options of failure_detection: fast. Join
// messages are retransmitted every 0.1 s too: with Galera's 1 s, members
// reconfiguring after a loss would look silent for longer than the suspect
// timeout, suspect each other and split into non-primary singletons.
const FastDetection = "evs.keepalive_period=PT0.1S;evs.suspect_timeout=PT0.5S;evs.inactive_check_period=PT0.1S;" +
	"evs.join_retrans_period=PT0.1S;evs.inactive_timeout=PT3S"

// AggressiveDetection are the provider options of failure_detection:
// aggressive, for dedicated hosts on one LAN: a member silent for 0.3 s
// (three keepalives), checked every 0.05 s, is suspected, so a killed
// writer's cluster commits again in about 0.4 s (0.42 s median of 5 kills,
// against 0.67 s with fast, measured in turns on this computer). The price
// is the margin: a member whose group communication stalls that long (a
// busy, throttled or paused host; this computer's test load once stalled
// every node of a lab for 1.4 s) is evicted and rejoins, and with it every
// commit waits as it would for a death.
const AggressiveDetection = "evs.keepalive_period=PT0.1S;evs.suspect_timeout=PT0.3S;evs.inactive_check_period=PT0.05S;" +
	"evs.join_retrans_period=PT0.1S;evs.inactive_timeout=PT3S"

// WANDetection are the provider options of failure_detection: wan, for
// sites up to about 100 ms apart: a member silent for 1.5 s (fifteen such
// round trips, five keepalives of 0.3 s in a row) is suspected, where
// Galera waits 5 s; join messages every 0.3 s, so a reconfiguration's
// rounds never look like silence. A peer connection silent for 0.75 s is
// given up (gmcast.peer_timeout, 3 s by default), so when the host that
// relays a segment's messages across the link crashes, another relays them
// before anyone on the far side is suspected: with the default, the near
// members suspected a far one at 2 s and the cluster split into two
// non-primary parts (measured, then fixed). A link whose round trip spikes
// past 1.5 s, or that loses five keepalives in a row, has a member evicted
// and rejoining (an IST); such a link wants stock.
const WANDetection = "evs.keepalive_period=PT0.3S;evs.suspect_timeout=PT1.5S;evs.inactive_check_period=PT0.25S;" +
	"evs.join_retrans_period=PT0.3S;evs.inactive_timeout=PT6S;gmcast.peer_timeout=PT0.75S"

// RenderServer renders a node's my.cnf.
func RenderServer(c ServerConfig) (string, error) {
	profile, err := TemplateSource("profiles/" + c.Profile + ".cnf")
	if err != nil {
		return "", fmt.Errorf("profile: %w", err)
	}
	return render("my.cnf.tmpl", struct {
		ServerConfig
		ProfileText string
	}{c, strings.TrimRight(profile, "\n")})
}

// RenderClient renders a client defaults file.
func RenderClient(lab, user, password, host string, port int) (string, error) {
	return render("client.cnf.tmpl", map[string]any{"Lab": lab, "User": user, "Password": password, "Host": host, "Port": port})
}

// RenderGrastate renders grastate.dat for a seeded node.
func RenderGrastate(stateUUID string, seqno int64, safe bool) (string, error) {
	return render("grastate.dat.tmpl", map[string]any{"StateUUID": stateUUID, "Seqno": seqno, "Safe": safe})
}

// RenderGvwstate renders gvwstate.dat: the last primary view Galera's
// pc.recovery restores, naming every member so all can start at once.
func RenderGvwstate(my string, members []string) (string, error) {
	if len(members) == 0 {
		return "", fmt.Errorf("gvwstate: no members")
	}
	return render("gvwstate.dat.tmpl", map[string]any{"MyUUID": my, "ViewUUID": members[0], "Members": members})
}
