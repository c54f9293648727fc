// Package drill runs a fault against a lab under an open-loop writer and
// reader through its load balancer, and judges what clients saw: the gap in
// acknowledgements, the errors over time, how long the cluster took to
// re-form and heal, and whether every acknowledged write is on every node
// afterwards. The judging is pure (this file); drill.go runs things.
package drill

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/hadrill/hadrill/internal/stats"
)

// Op is one write or read of the drill's traffic.
type Op struct {
	Write bool
	ID    int64     // writes: the unique id written
	Sent  time.Time // when it was issued
	Done  time.Time // when it returned (acknowledged or failed)
	Code  string    // "" when it succeeded, else the error's code (see Code)
}

// OK reports whether the operation succeeded (a write: acknowledged).
func (o *Op) OK() bool { return o.Code == "" && !o.Done.IsZero() }

// Code names an error the way a DBA reads it: the server's error number
// (1047 WSREP not ready, 1213 deadlock / certification failure, ...), or
// what the connection did: refused, timeout, lost, or other.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("%d", me.Number)
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled): // the drill's own interruption, not the server
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(err.Error(), "connection refused"):
		return "refused"
	case errors.Is(err, mysql.ErrInvalidConn), strings.Contains(err.Error(), "bad connection"),
		strings.Contains(err.Error(), "EOF"), strings.Contains(err.Error(), "connection reset"),
		strings.Contains(err.Error(), "broken pipe"):
		return "lost"
	}
	return "other"
}

// Gone says what a server's answer means when it says the audited table
// or its schema does not exist (1146 no such table, 1049 unknown database):
// the server was read, and everything that was in the table is gone. Any
// other error (refused, lost, timed out, not ready) says nothing of the
// data: "".
func Gone(err error) string {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return ""
	}
	switch me.Number {
	case 1146:
		return "the server answers that table app.hd_drill does not exist (error 1146): every acknowledged write in it is gone"
	case 1049:
		return "the server answers that database app does not exist (error 1049): every acknowledged write in it is gone"
	}
	return ""
}

// Gap is what clients saw of a fault: the longest span without a write's
// acknowledgement that ends at or after the fault (ClientGap). Open: no
// write was acknowledged after it up to the end of the traffic (To is then
// the last failed write's return): the writes did not resume within the
// drill. Zero when no write was acknowledged after the fault.
type Gap struct {
	From     time.Time     `json:"from"`
	To       time.Time     `json:"to"`
	Duration time.Duration `json:"duration_ns"`
	Seconds  float64       `json:"seconds"`
	Open     bool          `json:"open,omitempty"`
}

// ClientGap finds the longest span without acknowledgements that starts
// at or after the fault: acknowledgement times sorted, the largest
// difference between consecutive ones past at (the writer is open-loop, so
// in a healthy lab consecutive acknowledgements are one interval apart),
// or, when the writes sent after the last acknowledgement all failed, the
// span from it to the end of the traffic, which never closed. Writes in
// flight when the fault came and acknowledged after it do not close a gap
// that the writes after them leave open.
func ClientGap(ops []Op, at time.Time) Gap {
	acks := ackTimes(ops)
	var g Gap
	for i := 1; i < len(acks); i++ {
		if acks[i].Before(at) {
			continue
		}
		if d := acks[i].Sub(acks[i-1]); d > g.Duration {
			g = Gap{From: acks[i-1], To: acks[i], Duration: d}
		}
	}
	var last, end time.Time // the last acknowledgement; the last return of a write sent after it
	if len(acks) > 0 {
		last = acks[len(acks)-1]
	}
	for _, o := range ops {
		if o.Write && !o.OK() && o.Sent.After(last) {
			done := o.Done
			if done.IsZero() {
				done = o.Sent
			}
			if done.After(end) {
				end = done
			}
		}
	}
	from := last
	if from.IsZero() { // nothing was ever acknowledged
		from = at
	}
	if !end.IsZero() && !end.Before(at) && end.Sub(from) > g.Duration {
		g = Gap{From: from, To: end, Duration: end.Sub(from), Open: true}
	}
	g.Seconds = g.Duration.Seconds()
	return g
}

// ackTimes are the times writes were acknowledged, in order.
func ackTimes(ops []Op) []time.Time {
	var acks []time.Time
	for _, o := range ops {
		if o.Write && o.OK() {
			acks = append(acks, o.Done)
		}
	}
	sort.Slice(acks, func(i, j int) bool { return acks[i].Before(acks[j]) })
	return acks
}

// stallMin is the shortest span without an acknowledgement that counts as
// the fault's first pause (WritesBack): longer than a busy machine's
// jitter between a steady writer's acknowledgements, shorter than any
// failover measured here (0.3 s at the least).
const stallMin = 250 * time.Millisecond

// WritesBack is when writes came back from the fault: the acknowledgement
// that ended the first pause of the fault's, a span without one at least
// as long as the shorter of stallMin and the longest (g) that ends at or
// after the fault and no sooner after it than it began before it (a pause
// mostly before the fault is not its doing). A later, longer pause (a
// member rejoining, a second eviction) is g's, not the failover's: "writes
// back" is the end of the first. Zero when no pause closed (g zero or open
// with no closed pause before it).
func WritesBack(ops []Op, at time.Time, g Gap) time.Time {
	if g.Duration <= 0 {
		return time.Time{}
	}
	acks := ackTimes(ops)
	least := min(stallMin, g.Duration)
	for i := 1; i < len(acks); i++ {
		if !acks[i].Before(at) && acks[i].Sub(acks[i-1]) >= least && acks[i].Sub(at) >= at.Sub(acks[i-1]) {
			return acks[i]
		}
	}
	return time.Time{}
}

// LaterPause is how long after the fault the longest pause (the gap)
// began, when it began after the writes were back from the first: the gap
// is then not the failover's (false otherwise).
func (r *Result) LaterPause() (float64, bool) {
	if r.WritesBackS == nil || r.FaultAt.IsZero() || r.Gap.From.IsZero() {
		return 0, false
	}
	from := r.Gap.From.Sub(r.FaultAt).Seconds()
	return from, from >= *r.WritesBackS
}

// Bucket is one slice of the timeline: operations that returned in it.
type Bucket struct {
	T                   float64        // seconds since the start, bucket start
	WritesOK, WritesErr int            // per bucket
	ReadsOK, ReadsErr   int            //
	Codes               map[string]int // error code -> count (writes and reads)
}

// Timeline counts outcomes per bucket of width w from start.
func Timeline(ops []Op, start time.Time, w time.Duration, end time.Time) []Bucket {
	n := int(end.Sub(start)/w) + 1
	if n < 1 {
		n = 1
	}
	out := make([]Bucket, n)
	for i := range out {
		out[i].T = (time.Duration(i) * w).Seconds()
	}
	for _, o := range ops {
		if o.Done.IsZero() {
			continue
		}
		i := int(o.Done.Sub(start) / w)
		if i < 0 || i >= n {
			continue
		}
		b := &out[i]
		switch {
		case o.Write && o.OK():
			b.WritesOK++
		case o.Write:
			b.WritesErr++
		case o.OK():
			b.ReadsOK++
		default:
			b.ReadsErr++
		}
		if o.Code != "" {
			if b.Codes == nil {
				b.Codes = map[string]int{}
			}
			b.Codes[o.Code]++
		}
	}
	return out
}

// CodeSpan is one error code: how often, first and last seen (seconds since start).
type CodeSpan struct {
	Code   string  `json:"code"`
	Writes int     `json:"writes"`
	Reads  int     `json:"reads"`
	First  float64 `json:"first_s"`
	Last   float64 `json:"last_s"`
}

// Codes summarises the errors by code, in order of first appearance.
func Codes(ops []Op, start time.Time) []CodeSpan {
	idx := map[string]int{}
	var out []CodeSpan
	sorted := append([]Op(nil), ops...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Done.Before(sorted[j].Done) })
	for _, o := range sorted {
		if o.Code == "" || o.Done.IsZero() {
			continue
		}
		t := o.Done.Sub(start).Seconds()
		i, ok := idx[o.Code]
		if !ok {
			i = len(out)
			idx[o.Code] = i
			out = append(out, CodeSpan{Code: o.Code, First: t})
		}
		if o.Write {
			out[i].Writes++
		} else {
			out[i].Reads++
		}
		out[i].Last = t
	}
	return out
}

// Acked lists the ids of acknowledged writes.
func Acked(ops []Op) []int64 {
	var out []int64
	for _, o := range ops {
		if o.Write && o.OK() {
			out = append(out, o.ID)
		}
	}
	return out
}

// Agree reports whether every node's checksum of every table is the same,
// and names the tables that differ.
func Agree(sums map[string]map[string]string) (bool, []string) {
	tables := map[string]map[string]bool{}
	for _, byTable := range sums {
		for t, s := range byTable {
			if tables[t] == nil {
				tables[t] = map[string]bool{}
			}
			tables[t][s] = true
		}
	}
	var differ []string
	for t, values := range tables {
		if len(values) > 1 {
			differ = append(differ, t)
		}
	}
	for _, byTable := range sums {
		for t := range tables {
			if _, ok := byTable[t]; !ok && !contains(differ, t) {
				differ = append(differ, t)
			}
		}
	}
	sort.Strings(differ)
	return len(differ) == 0, differ
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Phase is what the clients saw of one stretch of a drill: before the
// fault, during it (until the cluster was whole again), after.
type Phase struct {
	Name      string  `json:"name"` // before, during, after
	Seconds   float64 `json:"seconds"`
	AckedPerS float64 `json:"acked_per_s"`   // writes sent in the phase and acknowledged, per second
	Failed    int     `json:"writes_failed"` // writes sent in the phase that failed
	P50Ms     float64 `json:"p50_ms"`        // latency of the acknowledged ones
	P99Ms     float64 `json:"p99_ms"`
}

// Phases splits the writes by when they were sent: before fault, from
// fault until whole (zero: the end), and after. A phase without time is
// left out.
func Phases(ops []Op, start, fault, whole, end time.Time) []Phase {
	if whole.IsZero() || whole.After(end) {
		whole = end
	}
	bounds := []struct {
		name     string
		from, to time.Time
	}{{"before", start, fault}, {"during", fault, whole}, {"after", whole, end}}
	var out []Phase
	for _, b := range bounds {
		span := b.to.Sub(b.from)
		if fault.IsZero() || span <= 0 {
			continue
		}
		p := Phase{Name: b.name, Seconds: span.Seconds()}
		var lat []time.Duration
		for _, o := range ops {
			if !o.Write || o.Sent.Before(b.from) || !o.Sent.Before(b.to) {
				continue
			}
			if o.OK() {
				lat = append(lat, o.Done.Sub(o.Sent))
			} else {
				p.Failed++
			}
		}
		slices.Sort(lat)
		p.AckedPerS = float64(len(lat)) / span.Seconds()
		p.P50Ms = float64(stats.Percentile(lat, 50).Microseconds()) / 1000
		p.P99Ms = float64(stats.Percentile(lat, 99).Microseconds()) / 1000
		out = append(out, p)
	}
	return out
}
