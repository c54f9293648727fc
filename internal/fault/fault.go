// Package fault is the vocabulary of faults: their kinds, the record of
// each injected one and the lab's fault log, the spans a clock fault
// lasted, and the dry-run mark. Injecting and healing them is package
// chaos's.
package fault

import (
	"context"
	"strings"
	"time"
)

// Record is one injected fault, as kept in <lab>/faults.jsonl and copied
// into the runs whose time span it falls in (the report marks it).
type Record struct {
	At      time.Time `json:"at"`
	Fault   Kind      `json:"fault"`   // see kinds.go
	Targets []string  `json:"targets"` // nodes, or a partition's side
	From    []string  `json:"from,omitempty"`
	Value   string    `json:"value,omitempty"` // a link fault's new value
}

// Label is the marker text of a fault.
func (r Record) Label() string {
	s := string(r.Fault)
	if len(r.Targets) > 0 {
		s += " " + strings.Join(r.Targets, ",")
	}
	if r.Value != "" {
		s += " " + r.Value
	}
	return s
}

type dryKey struct{}

// Dry marks ctx for a dry run: a fault applied with it checks everything it
// would check (the targets, the values, what the lab can take) and stops
// there, changing nothing. A drill checks its fault this way before its
// traffic starts.
func Dry(ctx context.Context) context.Context { return context.WithValue(ctx, dryKey{}, true) }

// IsDry reports whether ctx is a dry run's.
func IsDry(ctx context.Context) bool { return ctx.Value(dryKey{}) != nil }
