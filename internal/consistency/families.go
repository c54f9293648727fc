package consistency

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// An opFamily is one workload's operations in a history: the functions
// (f) they are, how an operation's value is read from a history and
// written to one, what of a completion must match its invocation beyond
// its function and micro-operations, and the checker of a history of
// them. A history holds operations of one family.
type opFamily interface {
	name() string        // as a refusal names the workload
	functions() []string // its operations' functions
	// parse reads an operation's value (op's F and Type are set).
	parse(op *Op, raw json.RawMessage) error
	// value is the operation's value as a history writes it (false: the
	// operation's micro-operations, Op's own "value").
	value(o Op) (any, bool)
	// mismatch says how a completion differs from its invocation in what
	// the family's values carry ("": it does not).
	mismatch(done, invoked Op) string
	check(ctx context.Context, ops []Op, model string) (*Result, error)
}

// families are the workloads' operations a history may hold, in the order
// a refusal lists them. A new workload's operations: a type implementing
// opFamily in a file of its own (its functions' names, its value's parse
// and write, its checker), and its entry here.
var families = []opFamily{appendFamily{}, bankFamily{}, setFamily{}}

// appendFunctions are list-append's operations' functions.
var appendFunctions = []string{FTxn}

// appendFamily is list-append's: transactions of appends and reads of
// lists.
type appendFamily struct{}

func (appendFamily) name() string        { return "list-append" }
func (appendFamily) functions() []string { return appendFunctions }
func (appendFamily) parse(op *Op, raw json.RawMessage) (err error) {
	op.Value, err = parseMops(raw)
	return err
}
func (appendFamily) value(Op) (any, bool)    { return nil, false }
func (appendFamily) mismatch(_, _ Op) string { return "" }
func (appendFamily) check(ctx context.Context, ops []Op, model string) (*Result, error) {
	return checkAppend(ctx, ops, model)
}

// familyOf is the family of an operation's function (nil: none).
func familyOf(f string) opFamily {
	for _, fam := range families {
		if slices.Contains(fam.functions(), f) {
			return fam
		}
	}
	return nil
}

// functions says every family's functions, for a refusal: "txn
// (list-append), transfer, read and init (bank), or add and read-set
// (set)".
func functions() string {
	var out []string
	for _, fam := range families {
		names := fam.functions()
		fs := names[0]
		if n := len(names); n > 1 {
			fs = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
		}
		out = append(out, fmt.Sprintf("%s (%s)", fs, fam.name()))
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + ", or " + out[len(out)-1]
}
