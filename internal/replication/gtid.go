package replication

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// GTID is one MariaDB global transaction id: domain-server-seqno.
type GTID struct {
	Domain, Server uint32
	Seq            uint64
}

func (g GTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq) }

// Position is a MariaDB GTID position (gtid_binlog_pos, gtid_slave_pos,
// gtid_current_pos): the last transaction seen in each domain.
type Position map[uint32]GTID

// ParsePosition parses "1-101-57,2-201-3" (empty: no transactions).
func ParsePosition(s string) (Position, error) {
	p := Position{}
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, "-")
		if len(f) != 3 {
			return nil, fmt.Errorf("GTID %q: expected domain-server-seqno", part)
		}
		d, err1 := strconv.ParseUint(f[0], 10, 32)
		sv, err2 := strconv.ParseUint(f[1], 10, 32)
		q, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("GTID %q: expected three whole numbers", part)
		}
		if _, dup := p[uint32(d)]; dup {
			return nil, fmt.Errorf("GTID position %q names domain %d twice", s, d)
		}
		p[uint32(d)] = GTID{uint32(d), uint32(sv), q}
	}
	return p, nil
}

// String renders the position sorted by domain, as the server does.
func (p Position) String() string {
	var parts []string
	for _, d := range p.domains() {
		parts = append(parts, p[d].String())
	}
	return strings.Join(parts, ",")
}

func (p Position) domains() []uint32 {
	ds := make([]uint32, 0, len(p))
	for d := range p {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}

// Covers reports whether p has every transaction o has (per domain, a
// sequence number at least as high).
func (p Position) Covers(o Position) bool { return len(p.Missing(o)) == 0 }

// Missing lists, per domain, the last transaction of o that p lacks.
func (p Position) Missing(o Position) []GTID {
	var out []GTID
	for _, d := range o.domains() {
		if mine, ok := p[d]; !ok || mine.Seq < o[d].Seq {
			out = append(out, o[d])
		}
	}
	return out
}

// State is a server's gtid_binlog_state: the last transaction of every
// server in every domain its binary log holds. Unlike a Position (one GTID
// per domain), it tells whose transactions a server has: a replica's own
// write and its primary's next one may share a sequence number.
type State map[[2]uint32]GTID

// ParseState parses "1-101-57,1-103-58,2-201-3" (empty: no transactions).
func ParseState(s string) (State, error) {
	st := State{}
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		p, err := ParsePosition(part)
		if err != nil {
			return nil, err
		}
		for _, g := range p {
			if _, dup := st[[2]uint32{g.Domain, g.Server}]; dup {
				return nil, fmt.Errorf("GTID state %q names %d-%d twice", s, g.Domain, g.Server)
			}
			st[[2]uint32{g.Domain, g.Server}] = g
		}
	}
	return st, nil
}

// Errant lists what a candidate has beyond reference in the domains not
// ignored: transactions of a server the reference never received, or a
// later one of a server than the reference has. Promoting the candidate
// would impose them on, or hide them from, the other servers.
func Errant(candidate, reference State, ignore map[uint32]bool) []GTID {
	var out []GTID
	for k, g := range candidate {
		if ignore[g.Domain] {
			continue
		}
		if ref, ok := reference[k]; !ok || ref.Seq < g.Seq {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Domain != out[j].Domain {
			return out[i].Domain < out[j].Domain
		}
		return out[i].Server < out[j].Server
	})
	return out
}

// Only keeps the given domains.
func (p Position) Only(domains []uint32) Position {
	out := Position{}
	for _, d := range domains {
		if g, ok := p[d]; ok {
			out[d] = g
		}
	}
	return out
}
