// Package galera holds pure Galera decisions: saved state parsing, how a
// stopped cluster may start again, and (later) health verdicts and failure codes.
package galera

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// SavedState is a node's grastate.dat, plus whether gvwstate.dat exists
// (pc.recovery left a primary view behind: the node crashed or was killed).
type SavedState struct {
	Node            string
	Present         bool // grastate.dat exists
	UUID            string
	Seqno           int64 // -1: unknown (crash; needs recovery from the storage engine)
	SafeToBootstrap bool
	HasView         bool
	Recovered       bool // UUID and Seqno come from the storage engine (--wsrep-recover)
	// Unreadable says why grastate.dat could not be read (an IO error, not
	// a missing file): nothing may be decided from it.
	Unreadable string
}

// ZeroUUID is the state UUID of a node that holds no cluster state: a new
// datadir, or one whose state transfer started and never completed.
const ZeroUUID = "00000000-0000-0000-0000-000000000000"

// Empty says the node holds no cluster state (the zero state UUID): it can
// only join a running cluster by a full state transfer.
func (s SavedState) Empty() bool { return s.Present && s.UUID == ZeroUUID }

// ParseGrastate parses the text of grastate.dat.
func ParseGrastate(text string) (SavedState, error) {
	s := SavedState{Present: true, Seqno: -1}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.HasPrefix(strings.TrimSpace(k), "#") {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "uuid":
			s.UUID = v
		case "seqno":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return s, fmt.Errorf("grastate.dat: bad seqno %q", v)
			}
			s.Seqno = n
		case "safe_to_bootstrap":
			s.SafeToBootstrap = v == "1"
		}
	}
	if s.UUID == "" {
		return s, fmt.Errorf("grastate.dat: no uuid")
	}
	return s, nil
}
