package galera

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// snapshot loads a status snapshot captured from MariaDB 10.11.19 + Galera
// 4.23 in a hadrill lab (testdata/snapshots; see README there).
func snapshot(t *testing.T, name string) Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "snapshots", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// derived copies a captured snapshot with some status values changed, for
// states too transient to read from a live node.
func derived(s Snapshot, status map[string]string) Snapshot {
	st := maps.Clone(s.Status)
	maps.Copy(st, status)
	return Snapshot{Status: st, Variables: s.Variables}
}

func TestJudge(t *testing.T) {
	synced := snapshot(t, "synced")
	cases := []struct {
		name string
		snap Snapshot
		opts HealthOptions
		ok   bool
		code Code
	}{
		{"synced", synced, HealthOptions{}, true, CodeSynced},
		{"majority side of a partition", snapshot(t, "majority-after-partition"), HealthOptions{}, true, CodeSynced},
		{"minority side of a partition", snapshot(t, "non-primary"), HealthOptions{}, false, CodeNonPrimary},
		{"minority even when donor allowed", snapshot(t, "non-primary"), HealthOptions{AvailableWhenDonor: true}, false, CodeNonPrimary},
		{"desynced", snapshot(t, "desynced"), HealthOptions{}, false, CodeDesynced},
		{"desynced, available when donor", snapshot(t, "desynced"), HealthOptions{AvailableWhenDonor: true}, true, CodeDonor},
		{"read_only counts when asked", snapshot(t, "read-only"), HealthOptions{ReadOnlyUnavailable: true}, false, CodeReadOnly},
		{"read_only ignored by default", snapshot(t, "read-only"), HealthOptions{}, true, CodeSynced},
		{"rejecting queries", snapshot(t, "reject-queries"), HealthOptions{}, false, CodeRejecting},
		{"drained", synced, HealthOptions{Drained: true}, false, CodeDrained},
		{"joiner (derived)", derived(synced, map[string]string{"wsrep_local_state": "1", "wsrep_local_state_comment": "Joining"}), HealthOptions{}, false, CodeJoining},
		{"joined, catching up (derived)", derived(synced, map[string]string{"wsrep_local_state": "3", "wsrep_local_state_comment": "Joined"}), HealthOptions{AvailableWhenDonor: true}, false, CodeJoining},
		{"not ready (derived)", derived(synced, map[string]string{"wsrep_ready": "OFF"}), HealthOptions{}, false, CodeNotReady},
		{"wsrep off", Snapshot{Status: map[string]string{}, Variables: map[string]string{"wsrep_on": "OFF"}}, HealthOptions{}, false, CodeNotGalera},
		{"empty snapshot", Snapshot{}, HealthOptions{}, false, CodeNotGalera},
		{"holds the cluster back (a full disk, derived)", derived(synced, map[string]string{"wsrep_flow_control_requested": "true", "wsrep_flow_control_active": "true", "wsrep_local_recv_queue": "29"}),
			HealthOptions{Held: 6 * time.Second}, false, CodeHoldsBack},
		{"asks for flow control briefly (derived)", derived(synced, map[string]string{"wsrep_flow_control_requested": "true", "wsrep_flow_control_active": "true", "wsrep_local_recv_queue": "17"}),
			HealthOptions{Held: time.Second}, true, CodeSynced},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.snap, c.opts)
			if v.OK != c.ok || v.Code != c.code || v.Reason == "" {
				t.Fatalf("got %+v, want ok=%v code=%s", v, c.ok, c.code)
			}
		})
	}
	if v := Unreachable(errors.New("i/o timeout")); v.OK || v.Code != CodeUnreachable {
		t.Fatalf("unreachable: %+v", v)
	}
}
