package consistency

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"sort"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
)

// The bank workload's operations (Jepsen's bank test): transfers of an
// amount between two accounts, and reads of every balance in one
// transaction. Money is neither made nor destroyed, so every committed
// read must see the total the accounts started with, and no balance below
// zero (a transfer that would overdraw is refused). An init line (type ok,
// f init) gives the accounts and their opening balances.
const (
	FTxn      = "txn"
	FTransfer = "transfer"
	FRead     = "read"
	FInit     = "init"
)

// Bank is a bank operation's value (its Op's Data): the transfer asked,
// or the balances read (nil in a read's invocation, and when not read) or
// opened with.
type Bank struct {
	From, To, Amount int
	Balances         map[int]int
}

// Family is the bank's.
func (*Bank) Family() Family { return BankOps }

// bankOf is a bank operation's value (nil: none).
func bankOf(o Op) *Bank {
	b, _ := o.Data.(*Bank)
	return b
}

// MarshalJSON writes an operation with its value in its function's shape:
// a transaction's micro-operations, a transfer's {"from", "to", "amount"},
// a read's balances by account ({"0": 100, …}, null when not read).
func (o Op) MarshalJSON() ([]byte, error) {
	type plain Op // the same fields, without this method
	v, ok := familyOf(o).value(o)
	if !ok {
		return json.Marshal(plain(o))
	}
	return json.Marshal(struct {
		plain
		Value any `json:"value"`
	}{plain(o), v})
}

// bankFunctions are the bank's operations' functions.
var bankFunctions = []string{FTransfer, FRead, FInit}

// bankFamily is the bank's: transfers, reads of every balance, and the
// opening balances.
type bankFamily struct{}

func (bankFamily) Name() string        { return "bank" }
func (bankFamily) Functions() []string { return bankFunctions }
func (bankFamily) Help() string {
	return `A bank history (f: init, with the opening balances as {"ACCOUNT": BALANCE}; transfer, {"from", "to",
"amount"}; read, the balances seen): committed reads whose total differs from the opening one
(wrong-total), that see a balance below zero (negative-value) or other accounts than opened
(unexpected-accounts), forbidden under every model.`
}
func (bankFamily) parse(op *Op, raw json.RawMessage) error {
	b, err := parseBank(op.F, op.Type, raw)
	op.Data = b
	return err
}
func (bankFamily) value(o Op) (any, bool)  { return bankValue(o), true }
func (bankFamily) mismatch(_, _ Op) string { return "" }
func (bankFamily) readOnly(o Op) bool      { return o.F == FRead }
func (bankFamily) losses() []string        { return nil } // wrong-total, forbidden under every model
func (bankFamily) check(_ context.Context, ops []Op, model string) (*Result, error) {
	return checkBank(ops, model)
}

// bankValue is a bank operation's value as the history writes it: a
// transfer's {"from", "to", "amount"}, a read's balances by account
// ({"0": 100, …}, null when not read).
func bankValue(o Op) any {
	bank := bankOf(o)
	switch {
	case bank == nil:
	case o.F == FTransfer:
		return map[string]int{"from": bank.From, "to": bank.To, "amount": bank.Amount}
	case bank.Balances != nil:
		m := map[string]int{}
		for k, b := range bank.Balances {
			m[strconv.Itoa(k)] = b
		}
		return m
	}
	return nil
}

// parseBank reads a bank operation's value: a transfer's, always; the
// balances of an init and of a completed read (null only in a read's
// invocation, or when it failed or its outcome is unknown).
func parseBank(f, typ string, raw json.RawMessage) (*Bank, error) {
	if len(raw) == 0 || string(raw) == "null" {
		switch {
		case f == FTransfer:
			return nil, fmt.Errorf(`expected {"from": ACCOUNT, "to": ACCOUNT, "amount": N}, got null`)
		case f == FInit || typ == "ok":
			return nil, fmt.Errorf(`expected the balances by account ({"0": 100, …}), got null`)
		}
		return &Bank{}, nil
	}
	if f == FTransfer {
		var t struct {
			From, To, Amount *int
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.From == nil || t.To == nil || t.Amount == nil {
			return nil, fmt.Errorf(`expected {"from": ACCOUNT, "to": ACCOUNT, "amount": N}, got %.60s`, raw)
		}
		switch {
		case *t.From == *t.To:
			return nil, fmt.Errorf("a transfer from account %d to itself", *t.From)
		case *t.Amount < 1:
			return nil, fmt.Errorf("amount: expected a positive amount, got %d", *t.Amount)
		}
		return &Bank{From: *t.From, To: *t.To, Amount: *t.Amount}, nil
	}
	var m map[string]*int
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf(`expected balances by account ({"0": 100, …}), got %.60s`, raw)
	}
	b := &Bank{Balances: map[int]int{}}
	for k, v := range m {
		a, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("expected integer accounts, got %q", k)
		}
		if v == nil {
			return nil, fmt.Errorf("account %d: expected a balance, got null", a)
		}
		if *v > maxBalance || *v < -maxBalance {
			return nil, fmt.Errorf("account %d: a balance of %d, beyond the ±%d a history may hold", a, *v, maxBalance)
		}
		b.Balances[a] = *v
	}
	return b, nil
}

// maxBalance bounds a balance, so that no sum of a history's balances
// overflows.
const maxBalance = 1 << 36

// checkBank checks a bank history: every committed read sees the accounts
// that opened (unexpected-accounts: one missing, or one never opened),
// holding the opening total (wrong-total: money made or destroyed, as a
// lost update does to a transfer that reads balances and writes new ones)
// with no balance below zero (negative-value). All are forbidden under
// every model. A history holds one init, and transfers between its
// accounts.
func checkBank(ops []Op, model string) (*Result, error) {
	var opening map[int]int
	var first *Op
	var rest []Op
	var problems []string
	for i, op := range ops {
		if op.F != FInit {
			rest = append(rest, op)
			continue
		}
		if first != nil {
			problems = append(problems, fmt.Sprintf("index %d: a second init (the first at index %d): one history a file", op.Index, first.Index))
			continue
		}
		if b := bankOf(op); b == nil || len(b.Balances) == 0 {
			return nil, hderr.User("index %d: the init line holds no balances", op.Index)
		}
		first, opening = &ops[i], bankOf(op).Balances
	}
	if opening == nil {
		return nil, hderr.User(`a bank history needs its opening balances: a line {"type": "ok", "f": "init", "value": {"0": 100, …}}`)
	}
	for _, op := range rest {
		if b := bankOf(op); op.F == FTransfer && b != nil {
			for _, a := range []int{b.From, b.To} {
				if _, ok := opening[a]; !ok {
					problems = append(problems, fmt.Sprintf("index %d: a transfer with account %d, which never opened", op.Index, a))
				}
			}
		}
	}
	if err := refusal(problems); err != nil {
		return nil, err
	}
	total := 0
	for _, b := range opening {
		total += b
	}
	txns, err := pair(rest)
	if err != nil {
		return nil, err
	}
	res := &Result{Model: model, Ops: len(ops)}
	found := findings{} // each type's smallest example: the read furthest from the truth… kept short
	for _, t := range txns {
		res.tally(t)
		if t.Type != "ok" || t.Invoke.F != FRead || bankOf(*t.Complete) == nil || bankOf(*t.Complete).Balances == nil {
			continue
		}
		seen := bankOf(*t.Complete).Balances
		sum := 0
		var neg, extra, missing []string
		for _, a := range sortedAccounts(seen) {
			sum += seen[a]
			if seen[a] < 0 {
				neg = append(neg, fmt.Sprintf("account %d at %d", a, seen[a]))
			}
			if _, ok := opening[a]; !ok {
				extra = append(extra, strconv.Itoa(a))
			}
		}
		for _, a := range sortedAccounts(opening) {
			if _, ok := seen[a]; !ok {
				missing = append(missing, strconv.Itoa(a))
			}
		}
		where := fmt.Sprintf("the read at index %d (process %d, through %s)", t.Complete.Index, t.Process, cmpOr(t.Node, "?"))
		if len(extra)+len(missing) > 0 {
			var what []string
			if len(missing) > 0 {
				what = append(what, "no account "+strings.Join(missing, ", "))
			}
			if len(extra) > 0 {
				what = append(what, "account "+strings.Join(extra, ", ")+", which never opened")
			}
			found.note("unexpected-accounts", "reads", fmt.Sprintf("%s saw %s (%s)", where, words.And(what), describeBalances(seen)), len(extra)+len(missing), t)
		}
		if sum != total {
			d := sum - total
			made := fmt.Sprintf("%d made", d)
			if d < 0 {
				made = fmt.Sprintf("%d destroyed", -d)
			}
			found.note("wrong-total", "reads", fmt.Sprintf("%s saw %d accounts holding %d in all, where %d accounts opened with %d: %s by the transfers (%s)",
				where, len(seen), sum, len(opening), total, made, describeBalances(seen)), abs(d), t)
		}
		if len(neg) > 0 {
			found.note("negative-value", "reads", fmt.Sprintf("%s saw %s, though no transfer may overdraw", where, strings.Join(neg, ", ")), len(neg), t)
		}
	}
	res.finish(found)
	return res, nil
}

func sortedAccounts(m map[int]int) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func describeBalances(m map[int]int) string {
	var parts []string
	for _, a := range sortedAccounts(m) {
		parts = append(parts, fmt.Sprintf("%d: %d", a, m[a]))
	}
	return strings.Join(parts, ", ")
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
