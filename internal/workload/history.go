package workload

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/consistency"
)

// historyWorkload is one workload that records a history: its name, how it
// starts, its final read of everything on one session (recorded as
// process; it says whether it succeeded), the keys a drill or a study's
// step gives it, how a run's log line says what it runs over, the figures
// its checked history gives (a study's consistency step reports them) and
// what its clients do, in those figures' descriptions.
type historyWorkload struct {
	name      string
	ops       consistency.Family // its operations in a history, and their checker
	start     func(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error)
	finalRead func(a *HistoryRun, ctx context.Context, conn *sql.Conn, process int, node string) bool
	keys      int
	// the keys it takes (--keys), and in what words
	keysMin, keysMax int
	keysWhat         string
	over             func(p HistoryParams) string
	figures          []Figure
	does             string
	// help says what its clients do and what its check judges, for bench
	// consistency's help ("With --workload NAME " comes before it)
	help string
}

// historyWorkloads are the history workloads, in the order they are listed.
var historyWorkloads = []historyWorkload{
	{name: "append", ops: consistency.ListAppendOps, start: StartAppend, finalRead: (*HistoryRun).finalAppendRead, keys: 10, keysMin: 1, keysMax: 100000, keysWhat: "expected %d to %d, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d keys", p.Keys) },
		figures: appendFigures, does: "list-append transactions from every client",
		help: `each client runs transactions of 1 to --max-ops micro-operations over --keys keys: appending a
value unique to its key, or reading the key's whole list; the check infers each key's order of versions
and names the dependency cycles and the other anomalies the history shows.`},
	{name: "bank", ops: consistency.BankOps, start: StartBank, finalRead: (*HistoryRun).finalBankRead, keys: 5, keysMin: 2, keysMax: 1000, keysWhat: "a bank needs %d to %d accounts, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d accounts", p.Keys) },
		figures: bankFigures, does: "transfers between five accounts from every client",
		help: `the clients move 1 to 5 between two of --keys accounts (both balances read, the new ones written;
refused when it would overdraw) or read every balance: a committed read that sees another total than
the accounts opened with (wrong-total: a lost update made or destroyed money) or a balance below zero
(negative-value) is forbidden under every model.`},
	{name: "set", ops: consistency.SetOps, start: StartSet, finalRead: (*HistoryRun).finalSetRead, keys: 2, keysMin: 1, keysMax: 1000, keysWhat: "expected %d to %d sets at once, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d sets at once", p.Keys) },
		figures: setFigures, does: "adds of unique elements and reads of the whole set from every client",
		help: `the clients add elements unique to the run (three in four operations, each one INSERT) or read
the whole set: per element, whether it became stable (every read since some moment saw it), was lost
(acknowledged or seen, then missing from every read since some moment: forbidden under every model) or
was never read after, and how long after its acknowledgement reads still missed it (a stale element:
strict serializability forbids it).`},
	{name: "counter", ops: consistency.CounterOps, start: StartCounter, finalRead: (*HistoryRun).finalCounterRead, keys: 3, keysMin: 1, keysMax: 1000, keysWhat: "expected %d to %d counters, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d counters", p.Keys) },
		figures: counterFigures, does: "increments of counters and reads of one from every client",
		help: `the clients add 1 to 5 to one of --keys counters (three in four operations, each one UPDATE … SET
v = v + n) or read one: each committed read is bounded by the increments around it, at least what was
acknowledged before it began (a stale read below: strict serializability forbids it), at most what may
have committed before it ended (a read above: forbidden under every model); the last read of each
counter missing acknowledged increments is a lost increment.`},
}

// HistoryWorkloads are the workloads that record a history, by name.
var HistoryWorkloads = func() []string {
	var out []string
	for _, w := range historyWorkloads {
		out = append(out, w.name)
	}
	return out
}()

// HistoryFamilies are the history workloads' operations, as a history
// file is read (hadrill check).
func HistoryFamilies() []consistency.Family {
	var out []consistency.Family
	for _, w := range historyWorkloads {
		out = append(out, w.ops)
	}
	return out
}

// HistoryUsage says the history workloads, each with what its clients do,
// for a flag's help: "append (list-append transactions from every client),
// bank (…) or set (…)".
func HistoryUsage() string {
	var out []string
	for _, w := range historyWorkloads {
		out = append(out, fmt.Sprintf("%s (%s)", w.name, w.does))
	}
	return words.Or(out)
}

// HistoryHelp says each history workload's clients and check, a paragraph
// each ("With --workload NAME …"), blank lines between them.
func HistoryHelp() string {
	var out []string
	for _, w := range historyWorkloads {
		out = append(out, "With --workload "+w.name+" "+w.help)
	}
	return strings.Join(out, "\n\n")
}

// IsHistory says whether a workload records a history.
func IsHistory(name string) bool { return slices.Contains(HistoryWorkloads, name) }

// historyOf is the history workload of a name ("": append).
func historyOf(name string) historyWorkload {
	for _, w := range historyWorkloads {
		if w.name == name {
			return w
		}
	}
	return historyWorkloads[0]
}

// HistoryName is a history workload's name as given, or the default's
// (list-append) for "".
func HistoryName(name string) string { return historyOf(name).name }

// HistoryKeys are the keys (accounts) a drill or a study's step gives a
// history workload.
func HistoryKeys(name string) int { return historyOf(name).keys }

// HistoryKeysProblem says what is wrong with keys for a history workload
// ("" when nothing).
func HistoryKeysProblem(name string, keys int) string {
	w := historyOf(name)
	if keys < w.keysMin || keys > w.keysMax {
		return fmt.Sprintf(w.keysWhat, w.keysMin, w.keysMax, keys)
	}
	return ""
}

// StartHistory starts p's workload, its read-only transactions on readers
// when there are any.
func StartHistory(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error) {
	return historyOf(p.Workload).start(ctx, l, targets, readers, p)
}
