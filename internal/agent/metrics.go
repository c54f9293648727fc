package agent

import (
	"fmt"
	"io"
	"strconv"
)

// gauges maps exported metric names to the wsrep status they come from.
var gauges = []struct{ name, status, help string }{
	{"galera_local_state", "wsrep_local_state", "wsrep_local_state (4 Synced, 2 Donor/Desynced, 1 Joining, 3 Joined)"},
	{"galera_cluster_size", "wsrep_cluster_size", "members in the node's component"},
	{"galera_flow_control_paused_ns", "wsrep_flow_control_paused_ns", "total time paused by flow control, ns"},
	{"galera_local_recv_queue", "wsrep_local_recv_queue", "write-sets waiting to be applied"},
	{"galera_local_send_queue", "wsrep_local_send_queue", "write-sets waiting to be sent"},
	{"galera_local_cert_failures", "wsrep_local_cert_failures", "local transactions that failed certification"},
	{"galera_last_committed", "wsrep_last_committed", "seqno of the last committed write-set"},
}

func writeMetrics(w io.Writer, node string, r Result) {
	label := fmt.Sprintf("{node=%q}", node)
	gauge := func(name, help string, v float64) {
		fmt.Fprintf(w, "# HELP hadrill_%s %s\n# TYPE hadrill_%s gauge\nhadrill_%s%s %g\n", name, help, name, name, label, v)
	}
	gauge("up", "1 when the agent could read the server", b2f(r.Reached))
	gauge("healthy", "1 when the node may take traffic (the HTTP 200 verdict)", b2f(r.OK))
	gauge("probe_seconds", "duration of the last probe of the server", r.Took.Seconds())
	if !r.Reached {
		return
	}
	st := r.Snapshot.Status
	gauge("galera_cluster_status", "1 when the node is in the primary component", b2f(st["wsrep_cluster_status"] == "Primary"))
	gauge("galera_ready", "1 when wsrep_ready=ON", b2f(st["wsrep_ready"] == "ON"))
	for _, g := range gauges {
		if v, err := strconv.ParseFloat(st[g.status], 64); err == nil {
			gauge(g.name, g.help, v)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
