package replication

import (
	"testing"

	"github.com/hadrill/hadrill/internal/galera"
)

func ch(io, sql, lag string) Channel {
	return Channel{"connection_name": "", "master_host": "198.18.0.11", "slave_io_running": io, "slave_sql_running": sql,
		"seconds_behind_master": lag}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name     string
		snap     Snapshot
		maxLag   int
		primary  galera.Code
		replica  galera.Code
		replicOK bool
	}{
		{"writable primary", Snapshot{}, -1, CodePrimary, CodeNotReplica, false},
		{"read-only server", Snapshot{ReadOnly: true}, -1, CodeNotPrimary, CodeNotReplica, false},
		{"healthy replica", Snapshot{Channels: []Channel{ch("Yes", "Yes", "0")}}, 5, CodeNotPrimary, CodeReplica, true},
		{"lagging replica", Snapshot{Channels: []Channel{ch("Yes", "Yes", "12")}}, 5, CodeNotPrimary, CodeLagging, false},
		{"lag allowed", Snapshot{Channels: []Channel{ch("Yes", "Yes", "12")}}, -1, CodeNotPrimary, CodeReplica, true},
		{"lag unknown", Snapshot{Channels: []Channel{ch("Yes", "Yes", "NULL")}}, 5, CodeNotPrimary, CodeLagging, false},
		{"IO thread connecting", Snapshot{Channels: []Channel{ch("Connecting", "Yes", "NULL")}}, -1, CodeNotPrimary, CodeStopped, false},
		{"SQL thread stopped", Snapshot{Channels: []Channel{ch("Yes", "No", "NULL")}}, -1, CodeNotPrimary, CodeStopped, false},
		// a former primary the keeper deposed, still writable (cut off, its read-only waiting for
		// its commits): no writes; as a replica it is judged as any other
		{"deposed, still writable", Snapshot{Deposed: true}, -1, CodeNotPrimary, CodeNotReplica, false},
		{"deposed, now a replica", Snapshot{Deposed: true, Channels: []Channel{ch("Yes", "Yes", "0")}}, 5, CodeNotPrimary, CodeReplica, true},
		// draining works in every role, not only in Galera
		{"drained primary", Snapshot{Drained: true}, -1, galera.CodeDrained, galera.CodeDrained, false},
		{"drained replica", Snapshot{Drained: true, Channels: []Channel{ch("Yes", "Yes", "0")}}, 5, galera.CodeDrained, galera.CodeDrained, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, r := JudgePrimary(c.snap), JudgeReplica(c.snap, c.maxLag)
			if p.Code != c.primary || p.OK != (c.primary == CodePrimary) || r.Code != c.replica || r.OK != c.replicOK || p.Reason == "" || r.Reason == "" {
				t.Fatalf("primary %+v, replica %+v", p, r)
			}
		})
	}
}
