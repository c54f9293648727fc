package galera

import (
	"strings"
	"testing"
)

func TestChooseQuorum(t *testing.T) {
	m := func(name string, primary bool, size int, seq int64) Member {
		return Member{Name: name, Answered: true, Primary: primary, Size: size, Seqno: seq}
	}
	for _, c := range []struct {
		name    string
		members []Member
		want    string
		why     string
	}{
		{"all non-primary, connected", []Member{m("db1", false, 3, 10), m("db2", false, 3, 12), m("db3", false, 3, 12)}, "db2", "db2 (most advanced, seqno 12)"},
		{"a primary component exists", []Member{m("db1", false, 1, 10), m("db2", true, 2, 12), m("db3", true, 2, 12)}, "", "db2 is in a primary component"},
		{"still partitioned", []Member{m("db1", false, 1, 10), m("db2", false, 2, 12), m("db3", false, 2, 12)}, "", "db1 sees 1 of the 3 members"},
		{"one silent", []Member{m("db1", false, 3, 10), {Name: "db2"}, m("db3", false, 3, 12)}, "", "db2 does not answer"},
		{"none", nil, "", "no member runs"},
	} {
		got, why := ChooseQuorum(c.members, len(c.members))
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %q (%s), want %q (%s)", c.name, got, why, c.want, c.why)
		}
	}
	if got, _ := ChooseQuorum([]Member{m("db1", false, 3, 10), m("db3", false, 3, 9)}, 3); got != "db1" {
		t.Errorf("two nodes and a running arbitrator: %q", got)
	}
	if got := MemberOf("db1", map[string]string{"wsrep_cluster_status": "non-Primary", "wsrep_cluster_size": "3", "wsrep_last_committed": "42"}); got.Primary || got.Size != 3 || got.Seqno != 42 || !got.Answered {
		t.Errorf("MemberOf: %+v", got)
	}
}
