package workload

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// historyWorkload is one workload that records a history: its name, how it
// starts, its final read of everything on one session (recorded as
// process; it says whether it succeeded), the keys a drill or a study's
// step gives it, how a run's log line says what it runs over, the figures
// its checked history gives (a study's consistency step reports them) and
// what its clients do, in those figures' descriptions.
type historyWorkload struct {
	name      string
	start     func(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error)
	finalRead func(a *HistoryRun, ctx context.Context, conn *sql.Conn, process int, node string) bool
	keys      int
	// the keys it takes (--keys), and in what words
	keysMin, keysMax int
	keysWhat         string
	over             func(p HistoryParams) string
	figures          []Figure
	does             string
}

// historyWorkloads are the history workloads, in the order they are listed.
var historyWorkloads = []historyWorkload{
	{name: "append", start: StartAppend, finalRead: (*HistoryRun).finalAppendRead, keys: 10, keysMin: 1, keysMax: 100000, keysWhat: "expected %d to %d, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d keys", p.Keys) },
		figures: appendFigures, does: "list-append transactions from every client"},
	{name: "bank", start: StartBank, finalRead: (*HistoryRun).finalBankRead, keys: 5, keysMin: 2, keysMax: 1000, keysWhat: "a bank needs %d to %d accounts, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d accounts", p.Keys) },
		figures: bankFigures, does: "transfers between five accounts from every client"},
	{name: "set", start: StartSet, finalRead: (*HistoryRun).finalSetRead, keys: 2, keysMin: 1, keysMax: 1000, keysWhat: "expected %d to %d sets at once, got %d",
		over:    func(p HistoryParams) string { return fmt.Sprintf(" over %d sets at once", p.Keys) },
		figures: setFigures, does: "adds of unique elements and reads of the whole set from every client"},
}

// HistoryWorkloads are the workloads that record a history, by name.
var HistoryWorkloads = func() []string {
	var out []string
	for _, w := range historyWorkloads {
		out = append(out, w.name)
	}
	return out
}()

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
