package consistency

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"slices"
	"sort"
)

// The counter workload's operations (Jepsen's counter): increments of one
// of the history's counters by a positive amount, and reads of one
// counter. Every counter starts at zero and only grows, so a committed
// read can be bounded from both sides by the increments around it: at
// least every increment acknowledged before it began, at most every one
// invoked before it ended and not surely failed.
const (
	FIncr        = "incr"
	FReadCounter = "read-counter"
)

// CounterOp is a counter operation's value (its Op's Data): the counter
// (its key), an increment's amount, a read's value (Read: the value was
// read).
type CounterOp struct {
	Key   int
	Delta int
	Value int
	Read  bool
}

// Family is the counter's.
func (*CounterOp) Family() Family { return CounterOps }

// counterOf is a counter operation's value (an empty one when it has
// none).
func counterOf(o Op) *CounterOp {
	if c, _ := o.Data.(*CounterOp); c != nil {
		return c
	}
	return &CounterOp{}
}

// CounterOps are the counter's operations.
var CounterOps Family = counterFamily{}

// counterFunctions are the counter's operations' functions.
var counterFunctions = []string{FIncr, FReadCounter}

// counterFamily is the counter's: increments and reads of counters.
type counterFamily struct{}

func (counterFamily) Name() string        { return "counter" }
func (counterFamily) Functions() []string { return counterFunctions }
func (counterFamily) Help() string {
	return `A counter history (f: incr, [KEY, AMOUNT]; read-counter, [KEY, VALUE]): each committed read of a
counter against the increments around it — above what every increment invoked before it ended and not
failed adds up to (counter-too-high, forbidden under every model), below what those acknowledged before
it began add up to (stale-counter), or a read after the last acknowledged increment below their sum
(lost-increment), both forbidden under strict serializability; per node, how many reads were stale and
how far behind.`
}
func (counterFamily) parse(op *Op, raw json.RawMessage) error {
	c, err := parseCounter(op.F, op.Type, raw)
	op.Data = c
	return err
}
func (counterFamily) value(o Op) (any, bool) {
	c := counterOf(o)
	switch {
	case o.F == FIncr:
		return []any{c.Key, c.Delta}, true
	case c.Read:
		return []any{c.Key, c.Value}, true
	}
	return []any{c.Key, nil}, true
}
func (counterFamily) readOnly(o Op) bool { return o.F == FReadCounter }
func (counterFamily) losses() []string   { return []string{"lost-increment"} }
func (counterFamily) mismatch(op, invoked Op) string {
	d, i := counterOf(op), counterOf(invoked)
	if d.Key != i.Key || op.F == FIncr && d.Delta != i.Delta {
		return fmt.Sprintf("completes %s of counter %d (%d), but index %d invoked it of counter %d (%d)", op.F, d.Key, d.Delta, invoked.Index, i.Key, i.Delta)
	}
	return ""
}
func (counterFamily) check(_ context.Context, ops []Op, model string) (*Result, error) {
	return checkCounter(ops, model)
}

// parseCounter reads a counter operation's value: an increment's [KEY,
// AMOUNT] (a positive amount), always; a read's [KEY, VALUE] (the value
// null in its invocation, or when it failed or its outcome is unknown).
func parseCounter(f, typ string, raw json.RawMessage) (*CounterOp, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		if f == FIncr {
			return nil, fmt.Errorf("expected [KEY, AMOUNT] (integers), got %.60s", raw)
		}
		return nil, fmt.Errorf("expected [KEY, VALUE] (integers, the value null when not read), got %.60s", raw)
	}
	c := &CounterOp{}
	if err := json.Unmarshal(pair[0], &c.Key); err != nil {
		return nil, fmt.Errorf("expected an integer key first, got %.60s", pair[0])
	}
	var v *int
	if err := json.Unmarshal(pair[1], &v); err != nil {
		return nil, fmt.Errorf("expected an integer second, got %.60s", pair[1])
	}
	switch {
	case f == FIncr && (v == nil || *v < 1):
		return nil, fmt.Errorf("expected a positive amount second, got %.60s", pair[1])
	case f == FIncr:
		c.Delta = *v
	case v == nil && typ == "ok":
		return nil, fmt.Errorf("expected the value read, got null")
	case v != nil && (*v < 0 || *v > maxBalance):
		return nil, fmt.Errorf("a value of %d, beyond the 0 to %d a counter may hold", *v, maxBalance)
	case v != nil:
		c.Value, c.Read = *v, true
	}
	return c, nil
}

// CounterFigures are a counter history's figures.
type CounterFigures struct {
	// Increments invoked, and how they ended: acknowledged (ok), failed,
	// unknown; Acknowledged and Unknown also as the amounts they add.
	Increments      int `json:"increments"`
	Acknowledged    int `json:"acknowledged"`
	Failed          int `json:"failed"`
	Unknown         int `json:"unknown"`
	AcknowledgedSum int `json:"acknowledged_sum"`
	UnknownSum      int `json:"unknown_sum"`
	// Reads committed; Stale: below what was acknowledged before they
	// began; TooHigh: above every increment that may have committed.
	Reads   int `json:"reads"`
	Stale   int `json:"stale"`
	TooHigh int `json:"too_high"`
	// Lost: the amount acknowledged that the last read of each counter
	// (one that began after its last acknowledged increment) missed,
	// summed over the counters; Unread: counters with acknowledged
	// increments and no such read.
	Lost   int `json:"lost"`
	Unread int `json:"unread"`
}

// text is the figures in words.
func (f CounterFigures) text() string {
	return fmt.Sprintf("%d %s (%d acknowledged, adding %d; %d failed; %d unknown, adding up to %d); %d %s, %d stale, %d above every increment that may have committed; %d acknowledged missed by the last reads%s",
		f.Increments, words.Noun(f.Increments, "increment"), f.Acknowledged, f.AcknowledgedSum, f.Failed, f.Unknown, f.UnknownSum, f.Reads, words.Noun(f.Reads, "read"), f.Stale, f.TooHigh, f.Lost, unreadText(f.Unread))
}

func unreadText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d %s with acknowledged increments and no read after the last of them)", n, words.Noun(n, "counter"))
}

// counterStep is one increment as the bounds see it: when it counts, and
// by how much.
type counterStep struct {
	at    int64
	delta int
	t     *Txn
}

// counterBound is a running sum of steps in time order: at(t) is the sum
// of the steps before t.
type counterBound struct {
	steps []counterStep
	sums  []int // sums[i]: steps[0..i]
}

func newBound(steps []counterStep) counterBound {
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	b := counterBound{steps: steps, sums: make([]int, len(steps))}
	s := 0
	for i, st := range steps {
		s += st.delta
		b.sums[i] = s
	}
	return b
}

// before is the sum of the steps strictly before t.
func (b counterBound) before(t int64) int {
	i := sort.Search(len(b.steps), func(i int) bool { return b.steps[i].at >= t })
	if i == 0 {
		return 0
	}
	return b.sums[i-1]
}

// exceeded is the first step after which the sum exceeds v (nil: never).
func (b counterBound) exceeded(v int) *counterStep {
	i := sort.Search(len(b.sums), func(i int) bool { return b.sums[i] > v })
	if i == len(b.sums) {
		return nil
	}
	return &b.steps[i]
}

// checkCounter checks a counter history: each committed read against the
// increments acknowledged before it began (its least value) and those
// invoked before it ended and not failed (its most).
func checkCounter(ops []Op, model string) (*Result, error) {
	txns, err := pair(ops)
	if err != nil {
		return nil, err
	}
	res := &Result{Model: model, Ops: len(ops)}
	fig := CounterFigures{}
	acked, possible := map[int][]counterStep{}, map[int][]counterStep{}
	lastAck := map[int]int64{}
	var reads []*Txn
	for _, t := range txns {
		res.tally(t)
		c := counterOf(*t.Invoke)
		switch t.Invoke.F {
		case FIncr:
			fig.Increments++
			switch t.Type {
			case "ok":
				fig.Acknowledged++
				fig.AcknowledgedSum += c.Delta
				acked[c.Key] = append(acked[c.Key], counterStep{t.Complete.Time, c.Delta, t})
				lastAck[c.Key] = max(lastAck[c.Key], t.Complete.Time)
			case "fail":
				fig.Failed++
				continue
			default:
				fig.Unknown++
				fig.UnknownSum += c.Delta
			}
			possible[c.Key] = append(possible[c.Key], counterStep{t.Invoke.Time, c.Delta, t})
		case FReadCounter:
			if t.Type == "ok" {
				reads = append(reads, t)
			}
		}
	}
	low, high := map[int]counterBound{}, map[int]counterBound{}
	for k, s := range acked {
		low[k] = newBound(s)
	}
	for k, s := range possible {
		high[k] = newBound(s)
	}
	sort.SliceStable(reads, func(i, j int) bool { return reads[i].Invoke.Time < reads[j].Invoke.Time })
	found := findings{}
	fresh := newFreshTally()
	last := map[int]*Txn{} // counter -> its latest read that began after its last acknowledged increment
	for _, r := range reads {
		k, v := counterOf(*r.Invoke).Key, counterOf(*r.Complete).Value
		fig.Reads++
		if most := high[k].before(r.Complete.Time); v > most {
			fig.TooHigh++
			found.note("counter-too-high", "reads", fmt.Sprintf("%s read %d from counter %d, but the increments invoked before it ended and not failed add up to %d", describe(r), v, k, most), 1, r)
		}
		behind := int64(-1)
		if least := low[k].before(r.Invoke.Time); v < least {
			fig.Stale++
			st := low[k].exceeded(v)
			behind = r.Invoke.Time - st.at
			found.note("stale-counter", "reads", fmt.Sprintf("%s read %d from counter %d at %s, but the increments acknowledged before it began add up to %d (%s, acknowledged at %s, took it past %d, %s before)",
				describe(r), v, k, at(r.Invoke.Time), least, describe(st.t), at(st.at), v, seconds(float64(behind)/1e9)), 2, r, st.t)
		}
		fresh.add(r.Node, behind)
		if l, ok := lastAck[k]; !ok || r.Invoke.Time > l {
			last[k] = r
		}
	}
	keys := make([]int, 0, len(acked))
	for k := range acked {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := last[k]
		if r == nil {
			fig.Unread++
			continue
		}
		total := low[k].before(lastAck[k] + 1)
		if v := counterOf(*r.Complete).Value; v < total {
			fig.Lost += total - v
			found.note("lost-increment", "counters", fmt.Sprintf("%s, the last read of counter %d, began after its last acknowledged increment and read %d, where the acknowledged increments add up to %d: %d missed",
				describe(r), k, v, total, total-v), 1, r)
		}
	}
	res.finish(found, "stale-counter", "lost-increment") // a serializable order may put the read first
	res.Own, res.Reads = ownFigures("increments", fig, fig.text()), fresh.figures()
	return res, nil
}
