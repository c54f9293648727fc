package replication

import (
	"strings"
	"testing"
	"time"
)

// replica: following db1, both threads as given, received/applied positions.
func replica(t *testing.T, name, io, recv, applied string) ReplicaView {
	return ReplicaView{Node: name, Reachable: true, Source: "db1", IO: io, SQL: "Yes", Received: pos(t, recv), Applied: pos(t, applied)}
}

func TestPrimaryDown(t *testing.T) {
	for _, c := range []struct {
		name     string
		views    []ReplicaView
		isolated bool
		down     bool
		why      string
	}{
		{"replicas lost it", []ReplicaView{replica(t, "db2", "Connecting", "1-101-5", "1-101-5"), replica(t, "db3", "No", "1-101-5", "1-101-5")}, false, true, "no replica receives"},
		{"a replica still receives: the keeper alone is cut off", []ReplicaView{replica(t, "db2", "Connecting", "", ""), replica(t, "db3", "Yes", "", "")}, false, false, "db3 still receives from db1"},
		{"isolated: an IO thread that has not noticed yet does not count", []ReplicaView{replica(t, "db2", "Yes", "", ""), replica(t, "db3", "Yes", "", "")}, true, true,
			"no host of its clients or replicas reaches db1"},
		{"isolated, but no replica answers", []ReplicaView{{Node: "db2"}, {Node: "db3"}}, true, false, "no replica answers"},
		{"no replica answers", []ReplicaView{{Node: "db2"}, {Node: "db3"}}, false, false, "no replica answers"},
		{"one answers, one down", []ReplicaView{{Node: "db2"}, replica(t, "db3", "Connecting", "", "")}, false, true, ""},
		{"a replica of another source does not count", []ReplicaView{func() ReplicaView {
			v := replica(t, "db2", "Yes", "", "")
			v.Source = "db3"
			return v
		}()}, false, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			down, why := PrimaryDown("db1", c.views, c.isolated)
			if down != c.down || !strings.Contains(why, c.why) {
				t.Errorf("down %v (%s), want %v (%s)", down, why, c.down, c.why)
			}
		})
	}
}

func TestChooseFailover(t *testing.T) {
	fenced := replica(t, "db2", "Connecting", "1-101-9", "1-101-9")
	fenced.Fenced = true
	broken := replica(t, "db3", "Connecting", "1-101-9", "1-101-7")
	broken.SQL, broken.SQLError = "No", "Duplicate entry"
	other := replica(t, "db2", "Connecting", "1-101-9", "1-101-9")
	other.Source = "db3"
	for _, c := range []struct {
		name  string
		views []ReplicaView
		want  string // node, or "" and a piece of the reason
		why   string
		wait  string
	}{
		{"the most advanced receiver, not the first", []ReplicaView{replica(t, "db2", "Connecting", "1-101-7", "1-101-7"), replica(t, "db3", "Connecting", "1-101-9", "1-101-8")},
			"db3", "holds everything", "1-101-9"},
		{"equal: the one with nothing left to apply", []ReplicaView{replica(t, "db2", "Connecting", "1-101-9", "1-101-8"), replica(t, "db3", "Connecting", "1-101-9", "1-101-9")},
			"db3", "", "1-101-9"},
		{"equal and applied: the first", []ReplicaView{replica(t, "db2", "Connecting", "1-101-9", "1-101-9"), replica(t, "db3", "Connecting", "1-101-9", "1-101-9")},
			"db2", "", "1-101-9"},
		{"applied more than received (restarted replica)", []ReplicaView{replica(t, "db2", "Connecting", "", "1-101-9"), replica(t, "db3", "Connecting", "1-101-8", "1-101-8")},
			"db2", "", ""},
		{"the only one", []ReplicaView{replica(t, "db2", "Connecting", "1-101-9", "1-101-9")}, "db2", "the only replica", "1-101-9"},
		{"fenced, stopped on an error, down, another source: none", []ReplicaView{fenced, broken, {Node: "db4"}, other},
			"", "db2 is fenced; db3 stopped applying: Duplicate entry; db4 does not answer; db2 does not replicate from db1", ""},
		{"diverged in two domains", []ReplicaView{replica(t, "db2", "Connecting", "1-101-9,2-201-3", "1-101-9,2-201-3"), replica(t, "db3", "Connecting", "1-101-10,2-201-2", "1-101-10,2-201-2")},
			"", "diverged", ""},
		{"a lagging replica never chosen over one that has more", []ReplicaView{replica(t, "db2", "Connecting", "1-101-3", "1-101-3"), fenced, replica(t, "db4", "Connecting", "1-101-4", "1-101-2")},
			"db4", "", "1-101-4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ChooseFailover("db1", c.views)
			if got.Node != c.want || !strings.Contains(got.Reason, c.why) || (c.want != "" && got.Wait.String() != c.wait) {
				t.Errorf("chose %q wait %s (%s), want %q wait %s (%s)", got.Node, got.Wait, got.Reason, c.want, c.wait, c.why)
			}
		})
	}
}

func TestLagVerdict(t *testing.T) {
	seen := time.Date(2026, 11, 24, 12, 0, 10, 0, time.UTC)
	for _, c := range []struct {
		name string
		hb   time.Time
		max  time.Duration
		ok   bool
		why  string
	}{
		{"fresh", seen.Add(-600 * time.Millisecond), 10 * time.Second, true, "at most 0.6s"},
		{"newer than last seen", seen.Add(time.Second), 10 * time.Second, true, "at most 0.0s"},
		{"too old", seen.Add(-12 * time.Second), 10 * time.Second, false, "12.0s older"},
		{"no heartbeat", time.Time{}, 10 * time.Second, false, "cannot be told"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why := LagVerdict(seen, c.hb, c.max)
			if ok != c.ok || !strings.Contains(why, c.why) {
				t.Errorf("%v (%s), want %v (%s)", ok, why, c.ok, c.why)
			}
		})
	}
}

func TestHeartbeatTime(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 0, 0, 123456000, time.FixedZone("CET", 3600))
	s := FormatHeartbeat(at)
	if s != "2026-11-26 08:00:00.123456" {
		t.Errorf("formatted %q, want UTC to the microsecond", s)
	}
	back, err := ParseHeartbeat(s)
	if err != nil || !back.Equal(at) {
		t.Errorf("parsed %v %v, want %v", back, err, at)
	}
	if _, err := ParseHeartbeat("yesterday"); err == nil {
		t.Error("a malformed heartbeat parsed")
	}
}

func TestReceiving(t *testing.T) {
	views := []ReplicaView{replica(t, "db2", "Connecting", "", ""), replica(t, "db3", "Yes", "", "")}
	if got := Receiving("db1", views); got != "db3" {
		t.Errorf("receiving: %q, want db3", got)
	}
	views[1].Reachable = false // it no longer answers: its word does not count
	if got := Receiving("db1", views); got != "" {
		t.Errorf("receiving: %q, want none", got)
	}
}
