package fault

import (
	"bufio"
	"encoding/json"
	"os"
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
