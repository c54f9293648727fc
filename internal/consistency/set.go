package consistency

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"slices"
	"sort"

	"github.com/hadrill/hadrill/internal/stats"
)

// The set workload's operations (Jepsen's set-full): adds of one element,
// unique to the history, to one of the history's sets, and reads of a
// whole set. Per element, the
// check says whether it became stable (every read that began after some
// moment saw it), was lost (acknowledged or seen, and then missing from
// every read since some moment), or was never read after it was known,
// and how long after its acknowledgement reads still missed it.
const (
	FAdd     = "add"
	FReadSet = "read-set"
)

// SetOp is a set operation's value (its Op's Data): the set (its key), and
// its elements (f add: the one element added; f read-set: the elements
// read, nil when not read).
type SetOp struct {
	Set      int
	Elements []int
}

// Family is the set's.
func (*SetOp) Family() Family { return SetOps }

// setOf is a set operation's value (an empty one when it has none).
func setOf(o Op) *SetOp {
	if s, _ := o.Data.(*SetOp); s != nil {
		return s
	}
	return &SetOp{}
}

// parseSet reads a set operation's value: an add's [SET, ELEMENT],
// always; a read's [SET, ELEMENTS] (the elements null in its invocation,
// or when it failed or its outcome is unknown).
func parseSet(f, typ string, raw json.RawMessage) (int, []int, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		if f == FAdd {
			return 0, nil, fmt.Errorf("expected [SET, ELEMENT] (integers), got %.60s", raw)
		}
		return 0, nil, fmt.Errorf("expected [SET, ELEMENTS] (a list of integers, or null), got %.60s", raw)
	}
	var set int
	if err := json.Unmarshal(pair[0], &set); err != nil {
		return 0, nil, fmt.Errorf("expected an integer set first, got %.60s", pair[0])
	}
	if f == FAdd {
		var e *int
		if err := json.Unmarshal(pair[1], &e); err != nil || e == nil {
			return 0, nil, fmt.Errorf("expected the integer element added second, got %.60s", pair[1])
		}
		return set, []int{*e}, nil
	}
	if string(pair[1]) == "null" {
		if typ == "ok" {
			return 0, nil, fmt.Errorf("expected the elements read (a list of integers), got null")
		}
		return set, nil, nil
	}
	out := []int{}
	if err := json.Unmarshal(pair[1], &out); err != nil {
		return 0, nil, fmt.Errorf("expected the elements read (a list of integers) or null, got %.60s", pair[1])
	}
	return set, out, nil
}

// setFunctions are the set's operations' functions.
var setFunctions = []string{FAdd, FReadSet}

// setFamily is the set's: adds of unique elements and reads of the whole
// set.
type setFamily struct{}

func (setFamily) Name() string        { return "set" }
func (setFamily) Functions() []string { return setFunctions }
func (setFamily) Help() string {
	return `A set history (f: add, [SET, ELEMENT]; read-set, [SET, ELEMENTS]): each element's fate, stable, lost
(lost-element, forbidden under every model) or never read after it was known, and how long reads still
missed it after it was known (stale-element, forbidden under strict serializability); per node, how
many reads were stale and how far behind.`
}
func (setFamily) parse(op *Op, raw json.RawMessage) error {
	set, elements, err := parseSet(op.F, op.Type, raw)
	op.Data = &SetOp{Set: set, Elements: elements}
	return err
}
func (setFamily) value(o Op) (any, bool) { return setValue(o), true }
func (setFamily) readOnly(o Op) bool     { return o.F == FReadSet }
func (setFamily) losses() []string       { return []string{"lost-element"} }
func (setFamily) check(_ context.Context, ops []Op, model string) (*Result, error) {
	return checkSet(ops, model)
}

// mismatch says how a set operation's completion differs from its
// invocation: another set, or an add of another element.
func (setFamily) mismatch(op, invoked Op) string {
	d, i := setOf(op), setOf(invoked)
	if d.Set != i.Set || op.F == FAdd && !slices.Equal(d.Elements, i.Elements) {
		return fmt.Sprintf("completes %s of set %d %v, but index %d invoked it of set %d %v", op.F, d.Set, d.Elements, invoked.Index, i.Set, i.Elements)
	}
	return ""
}

// setValue is a set operation's value as the history writes it.
func setValue(o Op) any {
	s := setOf(o)
	switch {
	case o.F == FAdd && len(s.Elements) == 1:
		return []any{s.Set, s.Elements[0]}
	case o.F == FReadSet && s.Elements != nil:
		return []any{s.Set, s.Elements}
	}
	return []any{s.Set, nil}
}

// SetFigures are a set history's figures per element and per read.
type SetFigures struct {
	// Adds invoked, and how they ended: acknowledged (ok), failed, unknown.
	Adds         int `json:"adds"`
	Acknowledged int `json:"acknowledged"`
	Failed       int `json:"failed"`
	Unknown      int `json:"unknown"`
	// Known: elements acknowledged or seen by a read. Stable: known, and
	// seen by every read that began after some moment (the last reads saw
	// it). Stale: stable, but missed by a read that began after the element
	// was known. Lost: known, and missing from every read since some moment.
	// NeverRead: acknowledged, and no read saw it or began after that.
	Known     int `json:"known"`
	Stable    int `json:"stable"`
	Stale     int `json:"stale"`
	Lost      int `json:"lost"`
	NeverRead int `json:"never_read"`
	// How long after an element was known reads still missed it (the last
	// such read's start; 0 when none did), over the stable elements, in
	// seconds: at least that long it was not visible everywhere.
	VisibleP50 float64 `json:"visible_after_p50_s"`
	VisibleP95 float64 `json:"visible_after_p95_s"`
	VisibleP99 float64 `json:"visible_after_p99_s"`
	VisibleMax float64 `json:"visible_after_max_s"`
}

// own are the figures as a Result's Own.
func (f SetFigures) own() *Own { return ownFigures("elements", f, f.text()) }

// text is the figures in words.
func (f SetFigures) text() string {
	s := fmt.Sprintf("%d %s added (%d acknowledged, %d failed, %d unknown); of %d known: %d stable, %d lost, %d never read after",
		f.Adds, words.Noun(f.Adds, "element"), f.Acknowledged, f.Failed, f.Unknown, f.Known, f.Stable, f.Lost, f.NeverRead)
	if f.Stable > 0 {
		s += fmt.Sprintf("; %d of the stable ones missed by a read that began after they were known; visible to every later read %s after (median), %s (p95), %s (p99), %s at most, at least",
			f.Stale, seconds(f.VisibleP50), seconds(f.VisibleP95), seconds(f.VisibleP99), seconds(f.VisibleMax))
	}
	return s
}

// element is one element's story.
type element struct {
	v, set       int
	add          *Txn
	known        int64 // -1: neither acknowledged nor seen
	lastPresent  int64 // the latest start of a read that saw it (-1: none)
	lastAbsent   int64 // the latest start of a read that began after it was known and missed it (-1: none)
	absent       int   // such reads
	absentReader *Txn  // the last read that missed it
	lostFrom     *Txn  // the first read that missed it after the last that saw it
}

// checkSet checks a set history: every element known (acknowledged, or
// seen) stays in every read from some moment on. A known element missing
// from every read since some moment is lost-element, forbidden under
// every model; one a read missed after it was known, and every read saw
// later, is stale-element, forbidden under strict serializability only (a
// serializable order may put that read first); a read of an element never
// added is garbage-read, of one whose add failed G1a. The figures per
// element (SetFigures) and per read (Result.Reads: a read that missed an
// element known before it began is stale) come with them.
func checkSet(ops []Op, model string) (*Result, error) {
	txns, err := pair(ops)
	if err != nil {
		return nil, err
	}
	res := &Result{Model: model, Ops: len(ops)}
	fig := &SetFigures{}
	byValue := map[int]*element{}
	var elems []*element
	var problems []string
	var reads []*Txn
	for _, t := range txns {
		res.tally(t)
		switch t.Invoke.F {
		case FAdd:
			add := setOf(*t.Invoke)
			if len(add.Elements) != 1 {
				problems = append(problems, fmt.Sprintf("index %d: an add of %d elements (one an add)", t.Invoke.Index, len(add.Elements)))
				continue
			}
			v := add.Elements[0]
			if e := byValue[v]; e != nil {
				problems = append(problems, fmt.Sprintf("index %d: adds %d, which the operation at index %d added already (each element is added once)", t.Invoke.Index, v, e.add.Invoke.Index))
				continue
			}
			e := &element{v: v, set: add.Set, add: t, known: -1, lastPresent: -1, lastAbsent: -1}
			byValue[v] = e
			elems = append(elems, e)
			fig.Adds++
			switch t.Type {
			case "ok":
				fig.Acknowledged++
				e.known = t.Complete.Time
			case "fail":
				fig.Failed++
			default:
				fig.Unknown++
			}
		case FReadSet:
			if t.Type == "ok" {
				reads = append(reads, t)
			}
		}
	}
	if err := refusal(problems); err != nil {
		return nil, err
	}
	sort.SliceStable(reads, func(i, j int) bool { return reads[i].Invoke.Time < reads[j].Invoke.Time })
	found := findings{}
	// what each read saw: an element seen is known from that read's end
	// at the latest
	for _, r := range reads {
		set := setOf(*r.Invoke).Set
		for _, v := range setOf(*r.Complete).Elements {
			e := byValue[v]
			switch {
			case e == nil:
				found.note("garbage-read", "reads", fmt.Sprintf("%s read %d in set %d, which no operation added", describe(r), v, set), 1, r)
				continue
			case e.set != set:
				found.note("garbage-read", "reads", fmt.Sprintf("%s read %d in set %d, where %s added it to set %d", describe(r), v, set, describe(e.add), e.set), 1, r)
				continue
			case e.add.Type == "fail":
				found.note("G1a", "reads", fmt.Sprintf("%s read %d, which %s added and failed (an aborted read)", describe(r), v, describe(e.add)), 2, r, e.add)
			}
			if e.known < 0 || r.Complete.Time < e.known {
				e.known = r.Complete.Time
			}
			e.lastPresent = max(e.lastPresent, r.Invoke.Time)
		}
	}
	// what each read missed: the elements known before it began, in the
	// order they became known, checked against the read's own elements
	var known []*element
	knownIn := map[int][]*element{} // set -> its known elements
	for _, e := range elems {
		if e.known >= 0 {
			known = append(known, e)
			knownIn[e.set] = append(knownIn[e.set], e)
		}
	}
	sort.SliceStable(known, func(i, j int) bool { return known[i].known < known[j].known })
	for _, in := range knownIn {
		sort.SliceStable(in, func(i, j int) bool { return in[i].known < in[j].known })
	}
	fresh := newFreshTally()
	seen := map[int]bool{}
	for _, r := range reads {
		clear(seen)
		for _, v := range setOf(*r.Complete).Elements {
			seen[v] = true
		}
		behind := int64(-1)
		for _, e := range knownIn[setOf(*r.Invoke).Set] {
			if e.known >= r.Invoke.Time {
				break
			}
			if seen[e.v] {
				continue
			}
			if behind < 0 {
				behind = r.Invoke.Time - e.known
			}
			e.absent++
			if r.Invoke.Time > e.lastAbsent {
				e.lastAbsent, e.absentReader = r.Invoke.Time, r
			}
			if e.lostFrom == nil && r.Invoke.Time > e.lastPresent {
				e.lostFrom = r
			}
		}
		fresh.add(r.Node, behind)
	}
	var visible []float64
	for _, e := range known {
		fig.Known++
		switch {
		case e.lastPresent < 0 && e.lastAbsent < 0:
			fig.NeverRead++
		case e.lastAbsent > e.lastPresent:
			fig.Lost++
			found.note("lost-element", "elements", fmt.Sprintf("%d, %s at %s, is missing from every read since %s began (%s)", e.v, knownHow(e), at(e.known), describe(e.lostFrom), at(e.lostFrom.Invoke.Time)), 1, e.add, e.lostFrom)
		default:
			fig.Stable++
			after := 0.0
			if e.absent > 0 {
				fig.Stale++
				after = float64(e.lastAbsent-e.known) / 1e9
				found.note("stale-element", "elements", fmt.Sprintf("%d, %s at %s, was missed by %d read(s) that began after that, the last %s at %s (%s after); every read since saw it",
					e.v, knownHow(e), at(e.known), e.absent, describe(e.absentReader), at(e.lastAbsent), seconds(after)), e.absent, e.add, e.absentReader)
			}
			visible = append(visible, after)
		}
	}
	if len(visible) > 0 {
		slices.Sort(visible)
		fig.VisibleP50, fig.VisibleP95, fig.VisibleP99 = stats.Percentile(visible, 50), stats.Percentile(visible, 95), stats.Percentile(visible, 99)
		fig.VisibleMax = visible[len(visible)-1]
	}
	res.finish(found, "stale-element") // a serializable order may put the read first
	res.Own, res.Reads = fig.own(), fresh.figures()
	return res, nil
}

// knownHow says how an element became known.
func knownHow(e *element) string {
	if e.add.Type == "ok" && e.add.Complete.Time == e.known {
		return "acknowledged to " + describe(e.add)
	}
	return "added by " + describe(e.add) + " and seen"
}

// at is a history time in seconds.
func at(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }
