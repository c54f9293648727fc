package consistency

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"slices"
)

// A Family is one workload's operations in a history: the functions (f)
// they are, how an operation's value is read from a history and written
// to one, what of a completion must match its invocation beyond its
// function and micro-operations, and the checker of a history of them. A
// history holds operations of one family. The families are this package's
// (ListAppendOps, BankOps, SetOps); which of them a history may hold is
// its reader's to say (Read), the workloads' registry's in hadrill.
type Family interface {
	Name() string        // as a refusal names the workload
	Functions() []string // its operations' functions
	// Help says its operations' shape in a history and what its checker
	// finds, in a sentence or a few (hadrill check's help).
	Help() string
	// parse reads an operation's value (op's F and Type are set):
	// list-append's into Value, another family's into Data, never nil
	// after it.
	parse(op *Op, raw json.RawMessage) error
	// value is the operation's value as a history writes it (false: the
	// operation's micro-operations, Op's own "value").
	value(o Op) (any, bool)
	// mismatch says how a completion differs from its invocation in what
	// the family's values carry ("": it does not).
	mismatch(done, invoked Op) string
	// readOnly says whether an operation only reads (a read/write split
	// sends it to the reads' target).
	readOnly(o Op) bool
	// losses are the anomaly types that are acknowledged writes lost once
	// the final reads, made after every node applied what was committed,
	// are in the history (Result.Losses).
	losses() []string
	check(ctx context.Context, ops []Op, model string) (*Result, error)
}

// A Payload is the value of an operation of a workload other than
// list-append, in that workload's own type (a bank's *Bank, a set's
// *SetOp); its Family is the operation's. List-append's value is Op.Value,
// its micro-operations, and its Data nil.
type Payload interface {
	Family() Family
}

// The families of this package's checkers.
var (
	ListAppendOps Family = appendFamily{}
	BankOps       Family = bankFamily{}
	SetOps        Family = setFamily{}
)

// appendFunctions are list-append's operations' functions.
var appendFunctions = []string{FTxn}

// appendFamily is list-append's: transactions of appends and reads of
// lists.
type appendFamily struct{}

func (appendFamily) Name() string        { return "list-append" }
func (appendFamily) Functions() []string { return appendFunctions }
func (appendFamily) Help() string {
	return `A list-append history (f: txn, the value its micro-operations [["append", KEY, VALUE], ["r", KEY,
LIST]]): each key's order of versions inferred from the reads, the transactions' dependency graph (ww,
wr, rw; the clients' process and real-time order) built, and what it shows named: G0, G1a, G1b, G1c,
G-single, G2-item, G-nonadjacent (long-fork the smallest) and their -process and -realtime forms,
lost-update, lost, internal, non-repeatable-read, incompatible-order, duplicate-elements, garbage-read,
each with a count (of the reads or appends that show it, each counted once under the most severe type
it closes) and its smallest example in words; per node, how many reads were stale and how far behind.`
}
func (appendFamily) parse(op *Op, raw json.RawMessage) (err error) {
	op.Value, err = parseMops(raw)
	return err
}
func (appendFamily) value(Op) (any, bool)    { return nil, false }
func (appendFamily) mismatch(_, _ Op) string { return "" }
func (appendFamily) losses() []string        { return []string{"lost"} }
func (appendFamily) readOnly(o Op) bool {
	return len(o.Value) > 0 && !slices.ContainsFunc(o.Value, func(m Mop) bool { return m.F != "r" })
}
func (appendFamily) check(ctx context.Context, ops []Op, model string) (*Result, error) {
	return checkAppend(ctx, ops, model)
}

// familyOf is an operation's family: its payload's, list-append's when
// it has none.
func familyOf(o Op) Family {
	if o.Data != nil {
		return o.Data.Family()
	}
	return ListAppendOps
}

// ReadOnly says whether an operation only reads: a transaction of reads
// alone, a read of every balance, a read of a set.
func ReadOnly(o Op) bool { return familyOf(o).readOnly(o) }

// families are the families a history is read as: each function's.
type families struct {
	all  []Family
	byF  map[string]Family
	list string // every family's functions, for a refusal
}

// newFamilies indexes fams by their functions.
func newFamilies(fams []Family) families {
	fs := families{all: fams, byF: map[string]Family{}}
	var out []string
	for _, fam := range fams {
		names := fam.Functions()
		for _, f := range names {
			fs.byF[f] = fam
		}
		out = append(out, fmt.Sprintf("%s (%s)", words.And(names), fam.Name()))
	}
	fs.list = words.Or(out)
	return fs
}

// of is the family of a function (nil: none of them).
func (fs families) of(f string) Family { return fs.byF[f] }

// has says whether fam is among them.
func (fs families) has(fam Family) bool { return slices.Contains(fs.all, fam) }
