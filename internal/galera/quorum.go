package galera

import (
	"fmt"
	"strconv"
)

// Member is a running Galera member as it answers now, for deciding
// whether the cluster needs a primary component given back.
type Member struct {
	Name string
	// Answered: its status was read (false: the other fields mean nothing).
	Answered bool
	Primary  bool  // wsrep_cluster_status = Primary
	Size     int   // wsrep_cluster_size: the members it is connected to, itself included
	Seqno    int64 // wsrep_last_committed
}

// MemberOf reads a member from its wsrep_% status.
func MemberOf(name string, st map[string]string) Member {
	size, _ := strconv.Atoi(st["wsrep_cluster_size"])
	seq, _ := strconv.ParseInt(st["wsrep_last_committed"], 10, 64)
	return Member{Name: name, Answered: true, Primary: st["wsrep_cluster_status"] == "Primary", Size: size, Seqno: seq}
}

// ChooseQuorum decides whether a cluster whose members all run but none is
// in a primary component (a quorum lost to a crash during a partition,
// which Galera does not always give back by itself) should be given one:
// only when every member answers and sees all the others (one component:
// bootstrapping a part would split the cluster), from the most advanced
// member (the first of equals). size is how many the component should
// hold: the members listed and a running arbitrator. It returns that
// member, or "" and why not.
func ChooseQuorum(members []Member, size int) (string, string) {
	if len(members) == 0 {
		return "", "no member runs"
	}
	for _, m := range members {
		if m.Answered && m.Primary {
			return "", m.Name + " is in a primary component"
		}
	}
	best := -1
	for i, m := range members {
		switch {
		case !m.Answered:
			return "", m.Name + " does not answer"
		case m.Size != size:
			return "", fmt.Sprintf("%s sees %d of the %d members: not one component", m.Name, m.Size, size)
		}
		if best < 0 || m.Seqno > members[best].Seqno {
			best = i
		}
	}
	return members[best].Name, fmt.Sprintf("every member runs, connected, and none is in a primary component: %s (most advanced, seqno %d) bootstraps one (pc.bootstrap)",
		members[best].Name, members[best].Seqno)
}
