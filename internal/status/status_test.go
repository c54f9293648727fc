package status

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
)

// A lab with something to say on every line: a drained node, a stopped
// one with its reason, a fenced one, a moved clock, a disk fault, faults
// since the last heal, disks down, a machine, a replica with its lag, a
// semi-sync primary, a load balancer pair and a WAN link.
func TestText(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	lag, no, yes := 0.25, false, true
	st := Status{Name: "demo", Status: "running", Mode: plan.ModeNetns, Network: "198.18.7.0/24",
		Nodes: []NodeInfo{
			{Name: "db1", Cluster: "db", Role: plan.RolePrimary, Region: "east", Address: "198.18.7.11", Port: 3306, State: "running", Pid: 101, Profile: "durable",
				Detail: replication.Detail{SemiSync: &replication.SemiSyncInfo{Enabled: true, Status: "ON", Clients: 1, AckedTx: 900, AsyncTx: 2}}},
			{Name: "db2", Cluster: "db", Role: plan.RoleReplica, Region: "east", Address: "198.18.7.12", Port: 3306, State: "running", Pid: 102, Profile: "durable", Drained: true,
				Clock: "+1m0s", DiskFaults: map[string]string{"data": "eio fsync", "logs": "full"},
				Detail: replication.Detail{Replication: []replication.ReplicaInfo{{Source: "db1", IO: "Yes", SQL: "Yes", LagSeconds: &lag, GTIDSlavePos: "1-101-900", SemiSync: true}}}},
			{Name: "db3", Cluster: "db", Role: plan.RoleFenced, Region: "west", Address: "198.18.7.13", Port: 3306, State: "down", Profile: "durable", DisksDown: true,
				Fenced: "held 1-101-901, which no replica received", Stopped: "InnoDB: fdatasync() returned 5 (EIO)"},
		},
		LoadBalancers: []LBInfo{{Name: "lb", Cluster: "db", Mode: "single-writer", Checks: "cloud", Address: "198.18.7.100", Port: 3306, Proxy: "proxyd", State: "running",
			Backends:  []lb.ServerState{{Proxy: "writes", Name: "db1", Status: "UP", Serving: true}, {Proxy: "writes", Name: "db2", Status: "MAINT"}},
			Instances: []lb.Instance{{Host: "lb1", Address: "198.18.7.101", ProxyUp: true, Keepalived: &yes, Holder: true}, {Host: "lb2", Address: "198.18.7.102", Keepalived: &no}},
			Out:       []lb.Event{{At: at.Add(90 * time.Second), Instance: "lb1", Proxy: "writes", Server: "db2", What: "down", Reason: "maintenance"}}}},
		Arbitrators: []ArbitratorInfo{{Name: "dbarb", Cluster: "db", Region: "west", Address: "198.18.7.20", State: "running", Pid: 120}},
		Client:      ClientInfo{Name: "client", Address: "198.18.7.201"},
		Faults:      []fault.Record{{At: at, Fault: fault.Partition, Targets: []string{"db3"}, From: []string{"db1", "db2"}}, {At: at.Add(time.Minute), Fault: fault.Clock, Targets: []string{"db2"}, Value: "+1m0s"}},
		FaultsOver:  []fault.Record{{At: at.Add(2 * time.Minute), Fault: fault.Kill, Targets: []string{"db1"}}},
		Disks:       &DisksInfo{State: "not serving", Problem: "the disk daemon is not running", Fix: "hadrill start --all --name demo"},
		Hosts: []HostInfo{{Name: "db1", FaultDomain: "db1", MemoryBytes: 512 << 20, Machine: &plan.Machine{Name: "small", CPUs: 1, MemoryBytes: 2 << 30}},
			{Name: "db2", FaultDomain: "db2", MemoryBytes: 400 << 20, OOMKills: 1}},
		Daemons: []DaemonInfo{{Host: "db1", Role: "server", Name: "db1 mariadbd", State: "running", Pid: 101}, {Host: "db1", Role: "agent", Name: "db1 agent", State: "running", Pid: 103},
			{Host: "db3", Role: "server", Name: "db3 mariadbd", State: "down"}, {Host: "db3", Role: "agent", Name: "db3 agent", State: "down"},
			{Host: "db3", Role: "exporter", Name: "db3 node_exporter", State: "down"}, {Host: "lb2", Role: "keepalived", Name: "lb2 keepalived", State: "unknown"}},
		Links: []LinkInfo{{Name: "east-west", RTTMs: 80, JitterMs: 5, LossPercent: 1, BandwidthBps: 10_000_000, Emulator: "running",
			Measured: &netem.Measured{Link: "east-west", At: at, P50Ms: 80.4, P99Ms: 91, Samples: 20, OK: true, Usable: true}}},
	}
	var b bytes.Buffer
	Text(&b, st)
	golden.Check(t, "status.txt", b.Bytes())
}

// A lab on remote machines: every host is listed, one that did not answer
// in time says so instead of being left out.
func TestTextRemote(t *testing.T) {
	cores := 0.42
	st := Status{Name: "rwan", Status: "running", Mode: plan.ModeSSH, Network: "198.19.246.0/24",
		Nodes: []NodeInfo{{Name: "db1", Cluster: "db", Role: plan.RoleGalera, Region: "east", Address: "198.19.246.11", Port: 3306, State: "Synced", Pid: 11, Profile: "default"},
			{Name: "db2", Cluster: "db", Role: plan.RoleGalera, Region: "west", Address: "198.19.246.12", Port: 3306, State: "Synced", Pid: 12, Profile: "default"}},
		Client: ClientInfo{Name: "client", Address: "198.19.246.14"},
		Hosts: []HostInfo{{Name: "db1", FaultDomain: "db1", CPUCores: &cores, MemoryBytes: 2 << 30},
			{Name: "db2", FaultDomain: "db2", Unanswered: "no answer within 5s"}},
	}
	var b bytes.Buffer
	Text(&b, st)
	golden.Check(t, "status-ssh.txt", b.Bytes())
}

func TestStateOf(t *testing.T) {
	for _, c := range []struct {
		p    host.Process
		err  error
		want string
	}{
		{host.Process{Pid: 7}, nil, "running"},
		{host.Process{Pid: 7, Paused: true}, nil, "paused"},
		{host.Process{}, nil, "down"},
		{host.Process{}, errors.New("host did not answer"), "unknown"},
	} {
		if got := StateOf(c.p, c.err); got != c.want {
			t.Errorf("%+v %v: %s, want %s", c.p, c.err, got, c.want)
		}
	}
}

func TestDaemon(t *testing.T) {
	st := Status{Daemons: []DaemonInfo{{Host: "db1", Role: "server", State: "running", Pid: 101}, {Host: "db1", Role: "agent", State: "paused", Pid: 102}}}
	if pid, state := st.Daemon("db1", "agent"); pid != 102 || state != "paused" {
		t.Errorf("db1 agent: %d %s", pid, state)
	}
	if pid, state := st.Daemon("dbarb", "arbitrator"); pid != 0 || state != "down" {
		t.Errorf("a daemon not listed: %d %s", pid, state)
	}
}

// TestVotedOutSaid: a Galera member its cluster voted out is said, with
// the error it met and what brings it back.
func TestVotedOutSaid(t *testing.T) {
	st := Status{Name: "g", Status: "running", Nodes: []NodeInfo{{Name: "db1", Cluster: "db", State: "Inconsistent",
		VotedOut: "Table `app`.`f` is corrupted. Please drop the table and recreate., Error_code: 1877"}}}
	var b strings.Builder
	Text(&b, st)
	want := "db1 VOTED OUT of its cluster: it could not apply a write set the others applied (Table `app`.`f` is corrupted. Please drop the table and recreate., Error_code: 1877); hadrill fault heal, or hadrill restart db1, has it join again"
	if !strings.Contains(b.String(), want) {
		t.Errorf("status text lacks %q:\n%s", want, b.String())
	}
}
