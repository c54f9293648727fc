// Package schedule is a random fault schedule a chaos drill follows: drawn
// from a seed (the same seed, faults, nodes and times give the same
// schedule, on any computer), stored with the run, and read back to run it
// again. Everything here is pure: drawing, checking against a lab's nodes,
// cutting at a time.
package schedule

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

// The kinds of fault a schedule draws from. A step holds one, sometimes
// with a process fault on top (Jepsen's crashes during partitions); every
// fault of a step is healed together at its end.
const (
	Kill         = "kill"          // kill -9 of one node's server, or a minority's; started again at the heal
	Pause        = "pause"         // SIGSTOP of one node's server, or a minority's; resumed at the heal
	Crash        = "crash"         // one node's host crashes (every process, its NICs down)
	PartitionOne = "partition-one" // one node cut off from every other
	// PartitionMinority cuts a minority off from the rest (with three
	// nodes, as partition-one).
	PartitionMinority = "partition-minority"
	// PartitionRing: every node still sees a majority, but no two the
	// same one (with three or four nodes: one pair cut from each other).
	PartitionRing = "partition-ring"
	// PartitionBridge: two halves cut from each other, one node (the
	// bridge) seeing both.
	PartitionBridge = "partition-bridge"
	// PartitionPrimary cuts the node the cluster's writes go to (a
	// primary cluster's primary, the node a Galera cluster's load balancer
	// writes to) off from every other, as Jepsen's "primaries": which node
	// that is is known only when the step comes (no targets drawn).
	PartitionPrimary = "partition-primary"
	OneWay           = "one-way" // the packets from one node to another dropped, not back
	ClockBump        = "clock"   // one node's wall clock moved up to a minute either way
	// ClockStrobe: one node's wall clock moved up to 30 s either way and
	// back, every 2, 3 or 5 s, for the hold (Jepsen's strobe, at
	// libfaketime's resolution: it reads the clock about every 2 s).
	ClockStrobe = "clock-strobe"
	CPU         = "cpu" // one node's machine cut to a tenth, a quarter or half a core
	// Memory: one node's machine left 256M, 512M or 1G, live (the OOM
	// killer may take its server).
	Memory = "memory"
	// Disk: one node's emulated volumes stall for the hold, fail their
	// fsyncs (EIO), slow down twentyfold, or lose power with the node's
	// host (what they had not flushed is lost; the host crashes).
	Disk = "disk"
	// Packets: a WAN link loses, duplicates, corrupts or reorders 1, 5 or
	// 20 % of its packets (Targets: the link).
	Packets = "packets"
	// Disconnect: every application connection to one node's server
	// killed, or, one time in two, to every node's (a proxy restarting);
	// the clients connect again.
	Disconnect = "disconnect"
)

// Kinds are the fault kinds, in the order --faults lists them.
var Kinds = []string{Kill, Pause, Crash, PartitionOne, PartitionMinority, PartitionRing, PartitionBridge, PartitionPrimary, OneWay, ClockBump, ClockStrobe, CPU, Memory, Disk, Packets, Disconnect}

// What a disk or packets event does.
const (
	DiskStall = "stall"
	DiskEIO   = "eio-fsync"
	DiskSlow  = "slow"
	// DiskPowerCut: the node's host loses power: its volumes drop the
	// writes they had not flushed, and every process of the host dies.
	DiskPowerCut = "power-cut"
)

// DiskFaults are what a disk event may do, in the order drawn.
var DiskFaults = []string{DiskStall, DiskEIO, DiskSlow, DiskPowerCut}

// PacketFaults are what a packets event does to its link (the fault
// kinds of the same names).
var PacketFaults = []string{"loss", "duplicate", "corrupt", "reorder"}

// Default are the kinds a chaos drill draws from unless told: Jepsen's
// Galera mix of crashes, pauses and partitions.
var Default = []string{Kill, Pause, PartitionOne, PartitionRing}

// process says whether a kind acts on servers (it may join a network
// fault in one step).
func process(kind string) bool { return kind == Kill || kind == Pause }

func network(kind string) bool { return strings.HasPrefix(kind, "partition-") || kind == OneWay }

// Event is one fault of a step: what, on which nodes, when within the step.
type Event struct {
	Offset  Seconds  `json:"offset_s"` // from the step's start
	Kind    string   `json:"kind"`
	Targets []string `json:"targets"`
	// From is a partition's other side (empty: every other host); for
	// one-way, the nodes whose packets are dropped on their way to Targets.
	From []string `json:"from,omitempty"`
	// Clock is a clock bump's offset ("+12s"), or a strobe's, moving
	// there and back every Strobe.
	Clock  string  `json:"clock,omitempty"`
	Strobe Seconds `json:"strobe_s,omitempty"`
	// Cores is what a CPU fault leaves its node.
	Cores float64 `json:"cores,omitempty"`
	// Limit is what a memory fault leaves its node ("256M").
	Limit string `json:"limit,omitempty"`
	// Disk is what a disk fault does (one of DiskFaults).
	Disk string `json:"disk,omitempty"`
	// Packet and Share: a packets fault's kind (PacketFaults) and the
	// share of the link's packets it takes, in percent.
	Packet string  `json:"packet,omitempty"`
	Share  float64 `json:"share_percent,omitempty"`
}

// Step is faults held together, then healed.
type Step struct {
	At     Seconds `json:"at_s"`   // from the schedule's start
	Hold   Seconds `json:"hold_s"` // from At until the heal
	Events []Event `json:"events"`
}

// Schedule is a drawn schedule and what drew it.
type Schedule struct {
	Seed     uint64   `json:"seed"`
	Faults   []string `json:"faults"`
	Nodes    []string `json:"nodes"`
	Duration Seconds  `json:"duration_s"`
	Hold     Seconds  `json:"hold_s"`     // the longest hold
	Interval Seconds  `json:"interval_s"` // the longest wait between a heal and the next step
	Steps    []Step   `json:"steps"`
}

// Seconds is a duration written as seconds (0.001 s precision).
type Seconds float64

// Of is d in Seconds.
func Of(d time.Duration) Seconds { return Seconds(float64(d.Milliseconds()) / 1000) }

// D is s as a time.Duration.
func (s Seconds) D() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// Params draw a schedule.
type Params struct {
	Seed   uint64
	Faults []string
	Nodes  []string
	// Links are the lab's WAN links a packets fault draws from (nil: not
	// known yet).
	Links    []string
	Duration time.Duration
	Hold     time.Duration // the longest a step holds (the shortest: a second, or Hold when less)
	Interval time.Duration // the longest wait after a heal (the shortest: half of it)
}

// Check names every problem with p at once (with Nodes nil, those the
// nodes decide are left for when they are known).
func (p Params) Check() error {
	var problems []string
	for _, k := range p.Faults {
		if !slices.Contains(Kinds, k) {
			problems = append(problems, fmt.Sprintf("--faults: unknown fault %q (faults: %s)", k, strings.Join(Kinds, ", ")))
		}
	}
	if len(p.Faults) == 0 {
		problems = append(problems, "--faults: name at least one fault ("+strings.Join(Kinds, ", ")+")")
	}
	if p.Nodes != nil && len(p.Nodes) < 2 { // nil: the nodes are not known yet
		problems = append(problems, fmt.Sprintf("the cluster has %d node: a chaos drill needs at least 2", len(p.Nodes)))
	}
	if p.Duration < time.Second || p.Duration > 24*time.Hour {
		problems = append(problems, fmt.Sprintf("--duration: expected 1s to 24h, got %v", p.Duration))
	}
	if p.Hold < 100*time.Millisecond || p.Hold > time.Hour {
		problems = append(problems, fmt.Sprintf("--hold: expected 100ms to 1h, got %v", p.Hold))
	}
	if p.Interval < 0 || p.Interval > time.Hour {
		problems = append(problems, fmt.Sprintf("--interval: expected 0 to 1h, got %v", p.Interval))
	}
	for _, k := range p.Faults {
		if (k == PartitionRing || k == PartitionBridge) && p.Nodes != nil && len(p.Nodes) < 3 {
			problems = append(problems, fmt.Sprintf("--faults: %s needs at least 3 nodes, the cluster has %d", k, len(p.Nodes)))
		}
		if k == Packets && p.Links != nil && len(p.Links) == 0 {
			problems = append(problems, "--faults: packets acts on a WAN link between regions, and the lab has none")
		}
	}
	return hderr.Users(problems)
}

// Generate draws a schedule: steps one after another from the start,
// each holding for a random time up to Hold, then a random wait up to
// Interval, until the next would end after Duration. Each step draws a
// kind from Faults and its targets from Nodes; a network fault is joined,
// one time in two when Faults has a process fault, by one at a random
// moment of its first half (a crash during a partition). The same Params
// give the same schedule.
func Generate(p Params) (Schedule, error) {
	if err := p.Check(); err != nil {
		return Schedule{}, err
	}
	s := Schedule{Seed: p.Seed, Faults: slices.Clone(p.Faults), Nodes: slices.Clone(p.Nodes), Duration: Of(p.Duration), Hold: Of(p.Hold), Interval: Of(p.Interval)}
	r := rand.New(rand.NewPCG(p.Seed, 0x68616472696c6c)) // the second word is fixed: the seed alone decides
	between := func(lo, hi time.Duration) time.Duration {
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(r.Int64N(int64(hi-lo)))
	}
	var procs []string
	for _, k := range p.Faults {
		if process(k) {
			procs = append(procs, k)
		}
	}
	minHold := min(time.Second, p.Hold)
	for at := time.Duration(0); ; {
		hold := between(minHold, p.Hold).Round(time.Millisecond)
		if at+hold > p.Duration {
			break
		}
		kind := p.Faults[r.IntN(len(p.Faults))]
		st := Step{At: Of(at), Hold: Of(hold), Events: []Event{event(r, kind, p.Nodes, p.Links, 0)}}
		if network(kind) && len(procs) > 0 && r.IntN(2) == 0 {
			off := between(0, hold/2).Round(time.Millisecond)
			st.Events = append(st.Events, event(r, procs[r.IntN(len(procs))], p.Nodes, p.Links, off))
		}
		s.Steps = append(s.Steps, st)
		at += hold + between(p.Interval/2, p.Interval).Round(time.Millisecond)
	}
	return s, nil
}

// event draws one fault's targets.
func event(r *rand.Rand, kind string, nodes, links []string, offset time.Duration) Event {
	shuffled := slices.Clone(nodes)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	minority := (len(nodes) - 1) / 2
	e := Event{Offset: Of(offset), Kind: kind}
	switch kind {
	case Kill, Pause:
		n := 1
		if minority > 1 {
			n = 1 + r.IntN(minority)
		}
		e.Targets = sorted(shuffled[:n])
	case Crash, PartitionOne:
		e.Targets = shuffled[:1]
	case PartitionMinority:
		e.Targets = sorted(shuffled[:max(1, minority)])
	case PartitionRing:
		// a pair cut from each other: both still see the rest, a majority
		// with three or four nodes; with more, every node keeps only its
		// ring neighbours (and so a majority only up to five)
		if len(nodes) <= 4 {
			e.Targets, e.From = shuffled[:1], shuffled[1:2]
			break
		}
		// the nodes in a ring: each cut from those more than one step away
		// (recorded as one cut per node, Targets the node, From the far ones)
		e.Targets = shuffled
	case PartitionBridge:
		half := (len(nodes) - 1) / 2
		e.Targets, e.From = sorted(shuffled[1:1+half]), sorted(shuffled[1+half:])
	case OneWay:
		e.Targets, e.From = shuffled[:1], shuffled[1:2]
	case ClockBump:
		e.Targets = shuffled[:1]
		secs := 1 + r.IntN(60)
		if r.IntN(2) == 0 {
			secs = -secs
		}
		e.Clock = fmt.Sprintf("%+ds", secs)
	case ClockStrobe:
		e.Targets = shuffled[:1]
		secs := 1 + r.IntN(30)
		if r.IntN(2) == 0 {
			secs = -secs
		}
		e.Clock, e.Strobe = fmt.Sprintf("%+ds", secs), []Seconds{2, 3, 5}[r.IntN(3)]
	case CPU:
		e.Targets = shuffled[:1]
		e.Cores = []float64{0.1, 0.25, 0.5}[r.IntN(3)]
	case Memory:
		e.Targets = shuffled[:1]
		e.Limit = []string{"256M", "512M", "1G"}[r.IntN(3)]
	case Disk:
		e.Targets = shuffled[:1]
		e.Disk = DiskFaults[r.IntN(len(DiskFaults))]
	case Disconnect:
		e.Targets = shuffled[:1]
		if r.IntN(2) == 0 {
			e.Targets = sorted(shuffled)
		}
	case Packets:
		if len(links) > 0 {
			e.Targets = []string{links[r.IntN(len(links))]}
		}
		e.Packet = PacketFaults[r.IntN(len(PacketFaults))]
		e.Share = []float64{1, 5, 20}[r.IntN(3)]
	}
	return e
}

func sorted(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// RingCuts are a ring partition's cuts over nodes in ring order: each node
// cut from every node more than one step away around the ring.
func RingCuts(ring []string) [][2]string {
	var cuts [][2]string
	n := len(ring)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if d := min(j-i, n-(j-i)); d > 1 {
				cuts = append(cuts, [2]string{ring[i], ring[j]})
			}
		}
	}
	return cuts
}

// Until is the schedule cut at t: the steps that start before it.
func (s Schedule) Until(t time.Duration) Schedule {
	out := s
	out.Steps = nil
	for _, st := range s.Steps {
		if st.At.D() < t {
			out.Steps = append(out.Steps, st)
		}
	}
	return out
}

// End is when the last step heals (0 without steps).
func (s Schedule) End() time.Duration {
	if len(s.Steps) == 0 {
		return 0
	}
	last := s.Steps[len(s.Steps)-1]
	return (last.At + last.Hold).D()
}

// Parse reads a stored schedule and checks it against a cluster's nodes
// and the lab's WAN links: every kind known, every node one of them (a
// packets fault's target one of the links), steps in time order, offsets
// within their holds; every problem named at once, with where.
func Parse(data []byte, where string, nodes, links []string) (Schedule, error) {
	var s Schedule
	if err := json.Unmarshal(data, &s); err != nil {
		return s, hderr.User("%s: not a schedule (JSON as a chaos drill stores it): %v", where, err)
	}
	var problems []string
	if len(s.Steps) == 0 {
		problems = append(problems, where+": steps: none")
	}
	var missing []string
	for i, st := range s.Steps {
		at := fmt.Sprintf("%s: steps[%d]", where, i)
		if st.Hold <= 0 || st.At < 0 {
			problems = append(problems, fmt.Sprintf("%s: at_s and hold_s must be positive, got %v and %v", at, st.At, st.Hold))
		}
		if i > 0 && st.At < s.Steps[i-1].At+s.Steps[i-1].Hold {
			problems = append(problems, fmt.Sprintf("%s: starts at %v s, before the step before it heals", at, st.At))
		}
		if len(st.Events) == 0 {
			problems = append(problems, at+": events: none")
		}
		for j, e := range st.Events {
			ev := fmt.Sprintf("%s.events[%d]", at, j)
			if !slices.Contains(Kinds, e.Kind) {
				problems = append(problems, fmt.Sprintf("%s.kind: unknown fault %q (faults: %s)", ev, e.Kind, strings.Join(Kinds, ", ")))
			}
			if e.Offset < 0 || e.Offset >= st.Hold {
				problems = append(problems, fmt.Sprintf("%s.offset_s: %v is outside the step's hold (0 to %v s)", ev, e.Offset, st.Hold))
			}
			if len(e.Targets) == 0 && e.Kind != PartitionPrimary {
				problems = append(problems, ev+".targets: none")
			}
			if e.Kind == Packets {
				for _, k := range e.Targets {
					if !slices.Contains(links, k) && !slices.Contains(missing, k) {
						missing = append(missing, k)
					}
				}
				if !slices.Contains(PacketFaults, e.Packet) || e.Share <= 0 || e.Share > 100 {
					problems = append(problems, fmt.Sprintf("%s: expected a packet fault of %s and a share above 0 and at most 100, got %q %g", ev, strings.Join(PacketFaults, ", "), e.Packet, e.Share))
				}
				continue
			}
			for _, n := range slices.Concat(e.Targets, e.From) {
				if !slices.Contains(nodes, n) && !slices.Contains(missing, n) {
					missing = append(missing, n)
				}
			}
			if e.Kind == Disk && !slices.Contains(DiskFaults, e.Disk) {
				problems = append(problems, fmt.Sprintf("%s.disk: expected one of %s, got %q", ev, strings.Join(DiskFaults, ", "), e.Disk))
			}
			if e.Kind == Memory && e.Limit == "" {
				problems = append(problems, ev+".limit: none")
			}
			if e.Kind == CPU && (e.Cores < 0.01 || e.Cores > 64) {
				problems = append(problems, fmt.Sprintf("%s.cores: expected 0.01 to 64, got %g", ev, e.Cores))
			}
			if e.Kind == ClockBump || e.Kind == ClockStrobe {
				if _, err := time.ParseDuration(strings.TrimPrefix(e.Clock, "+")); err != nil {
					problems = append(problems, fmt.Sprintf("%s.clock: expected a signed duration such as +12s, got %q", ev, e.Clock))
				}
			}
			if e.Kind == ClockStrobe && (e.Strobe < 2 || e.Strobe > 3600) {
				problems = append(problems, fmt.Sprintf("%s.strobe_s: expected a period of 2 to 3600 s, got %v", ev, e.Strobe))
			}
		}
	}
	if len(missing) > 0 {
		have := strings.Join(nodes, ", ")
		if len(links) > 0 {
			have += "; links " + strings.Join(links, ", ")
		}
		problems = append(problems, fmt.Sprintf("%s: the schedule names %s, not nodes of this cluster or links of this lab (%s): a replay needs a lab of the same shape",
			where, strings.Join(missing, ", "), have))
	}
	return s, hderr.Users(problems)
}

// Says is a step in words ("kill db2; 1.2 s later partition-one db3").
func (st Step) Says() string {
	var parts []string
	for i, e := range st.Events {
		w := strings.TrimSpace(e.Kind + " " + strings.Join(e.Targets, ","))
		if len(e.From) > 0 {
			w += " from " + strings.Join(e.From, ",")
		}
		if e.Clock != "" {
			w += " " + e.Clock
		}
		if e.Strobe > 0 {
			w += fmt.Sprintf(" and back every %g s", float64(e.Strobe))
		}
		if e.Cores > 0 {
			w += fmt.Sprintf(" to %g cores", e.Cores)
		}
		if e.Limit != "" {
			w += " to " + e.Limit
		}
		if e.Disk != "" {
			w += " " + e.Disk
		}
		if e.Packet != "" {
			w += fmt.Sprintf(" %s %g%%", e.Packet, e.Share)
		}
		if i > 0 {
			w = fmt.Sprintf("%.1f s later %s", float64(e.Offset), w)
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, "; ")
}
