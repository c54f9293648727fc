package plan

import (
	"fmt"
	"path/filepath"
)

// The exporters' ports: each host's node_exporter, each database node's
// mysqld_exporter (the ports their Debian packages default to), and each
// load balancer host's proxy's own Prometheus endpoint.
const (
	NodeExporterPort   = 9100
	MysqldExporterPort = 9104
	ProxyMetricsPort   = 8405
)

// The exporters' jobs, as their series are labelled.
const (
	JobNode   = "node"
	JobMysqld = "mysqld"
	JobProxy  = "proxy"
)

// Exporter is a Prometheus endpoint of a lab with monitoring on: what it
// describes (Job, Instance), where it answers, and, for an exporter of its
// own, its daemon. A load balancer's proxy serves its metrics itself (no
// Argv).
type Exporter struct {
	Job      string   `json:"job"`
	Instance string   `json:"instance"` // the host, node or load balancer host it describes
	Host     string   `json:"host"`
	Address  string   `json:"address"`
	Port     int      `json:"port"`
	Argv     []string `json:"argv,omitempty"`
	Daemon   Daemon   `json:"daemon,omitempty"`
	// DefaultsFile (mysqld_exporter) holds the health-check user's
	// credentials and the node's socket, written (0600) before it starts.
	DefaultsFile string `json:"defaults_file,omitempty"`
}

// URL is where the exporter serves its metrics.
func (e Exporter) URL() string { return fmt.Sprintf("http://%s:%d/metrics", e.Address, e.Port) }

// Name is how the exporter is shown: "db1 mysqld_exporter".
func (e Exporter) Name() string {
	return e.Instance + " " + map[string]string{JobNode: "node_exporter", JobMysqld: "mysqld_exporter", JobProxy: "proxy metrics"}[e.Job]
}

// mysqldCollectors are mysqld_exporter's collectors for a lab: SHOW GLOBAL
// STATUS (Galera's wsrep_* among it) and SHOW SLAVE STATUS. Global
// variables are in the run's configs already (and are 1,500 lines a
// scrape); the InnoDB compression tables need PROCESS, which the
// health-check user does not have.
var mysqldCollectors = []string{"--collect.global_status", "--collect.slave_status", "--no-collect.global_variables",
	"--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem", "--no-collect.info_schema.query_response_time"}

// nodeCollectors are node_exporter's collectors for a lab host: CPU,
// memory, disks, NICs, load and pressure; the textfile directory (the
// host's own, empty unless the user drops .prom files there) marks the
// process as the lab's.
var nodeCollectors = []string{"--collector.disable-defaults", "--collector.cpu", "--collector.stat", "--collector.meminfo",
	"--collector.vmstat", "--collector.diskstats", "--collector.netdev", "--collector.loadavg", "--collector.pressure", "--collector.textfile"}

// monitoring lists a lab's exporters when its spec asks for monitoring: a
// node_exporter per host, a mysqld_exporter per database node, the proxy's
// endpoint per load balancer host. In labs of namespaces and on remote
// machines (each exporter's files in its host's directory for the lab):
// each host has an address of its own for the exporters' fixed ports; a
// rootless lab's hosts share this computer's.
func (b *builder) monitoring() {
	if !b.s.Monitoring {
		return
	}
	if b.p.Mode == ModeRootless {
		b.problems = append(b.problems, "monitoring: the exporters need a host of their own for their ports: a lab of network namespaces (as root) or of remote machines (--inventory); remove monitoring: true (or --monitoring)")
		return
	}
	daemon := func(host, name string) Daemon {
		d := filepath.Join(b.hostDir(host), "exporters", name)
		return Daemon{Dir: d, LogFile: d + ".log", PidFile: d + ".pid", Marker: d}
	}
	for _, h := range b.p.Hosts {
		d := daemon(h.Name, "node-"+h.Name)
		b.p.Monitoring = append(b.p.Monitoring, Exporter{Job: JobNode, Instance: h.Name, Host: h.Name, Address: h.Address, Port: NodeExporterPort, Daemon: d,
			Argv: append([]string{"prometheus-node-exporter", fmt.Sprintf("--web.listen-address=%s:%d", h.Address, NodeExporterPort),
				"--collector.textfile.directory=" + d.Marker}, nodeCollectors...)})
	}
	for _, n := range b.p.Nodes {
		d := daemon(n.Host, "mysqld-"+n.Name)
		cnf := d.Marker + ".cnf"
		d.Marker = cnf // a whole argument of its command line: how the process is known as this exporter
		b.p.Monitoring = append(b.p.Monitoring, Exporter{Job: JobMysqld, Instance: n.Name, Host: n.Host, Address: n.Address, Port: MysqldExporterPort, Daemon: d,
			DefaultsFile: cnf, Argv: append([]string{"prometheus-mysqld-exporter", fmt.Sprintf("--web.listen-address=%s:%d", n.Address, MysqldExporterPort),
				"--config.my-cnf=" + cnf}, mysqldCollectors...)})
	}
	for _, lb := range b.p.LoadBalancers {
		if !lb.Kind.Metrics() {
			continue
		}
		for _, in := range lb.Instances {
			b.p.Monitoring = append(b.p.Monitoring, Exporter{Job: JobProxy, Instance: in.Host, Host: in.Host, Address: in.Address, Port: ProxyMetricsPort})
		}
	}
}
