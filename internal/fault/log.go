package fault

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// Log is a lab's fault log (<lab>/faults.jsonl, Plan.FaultLog): one record
// a line, appended once a fault took effect.
type Log string

// Append adds r; At is when the fault began (now when not given). Faults
// are recorded under the lab's writer lock, so the log's order is the
// order in which they took effect.
func (l Log) Append(r Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	f, err := os.OpenFile(string(l), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer f.Close()
	return json.NewEncoder(f).Encode(r)
}

// Between lists the faults that began between from and to (inclusive); a
// damaged line is skipped.
func (l Log) Between(from, to time.Time) []Record {
	f, err := os.Open(string(l))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && !r.At.Before(from) && !r.At.After(to) {
			if r.Targets == nil { // a heal's, or a recovery of every node: none, an empty list in JSON
				r.Targets = []string{}
			}
			out = append(out, r)
		}
	}
	return out
}

// SinceHeal are the faults injected after the last heal (what may still
// be in force), recoveries and restarts left out.
func SinceHeal(recs []Record) []Record {
	var out []Record
	for _, r := range recs {
		switch r.Fault {
		case Heal:
			out = nil
		case Recover, Restart, Resume:
		default:
			out = append(out, r)
		}
	}
	return out
}

// LastHeal is when the last heal of recs was (zero: none).
func LastHeal(recs []Record) time.Time {
	var at time.Time
	for _, r := range recs {
		if r.Fault == Heal {
			at = r.At
		}
	}
	return at
}

// Ended says which fault ended a node's server that started at started
// (a kill, a crash or a stop since; a kill -9 leaves no line in the
// server's log), "" when none did.
func Ended(recs []Record, node string, started time.Time) string {
	why := ""
	for _, r := range recs {
		ends := r.Fault == Kill || r.Fault == Crash || r.Fault == Stop
		if ends && slices.Contains(r.Targets, node) && !r.At.Before(started.Truncate(time.Second)) {
			why = fmt.Sprintf("ended by hadrill's fault %s at %s", r.Label(), r.At.Local().Format("15:04:05"))
		}
	}
	return why
}

// Split parts faults (since the last heal) into those that may still be
// in force and those that are over: a partition lifted says lifted; a
// kill, stop, pause or crash is over once every node it named runs again
// (running: node → answering now).
func Split(recs []Record, lifted func(Record) bool, running map[string]bool) (still, over []Record) {
	for _, r := range recs {
		done := false
		switch r.Fault {
		case Partition:
			done = lifted(r)
		case Kill, Stop, Pause, Crash:
			done = len(r.Targets) > 0 && !slices.ContainsFunc(r.Targets, func(t string) bool { return !running[t] })
		}
		if done {
			over = append(over, r)
		} else {
			still = append(still, r)
		}
	}
	return still, over
}
