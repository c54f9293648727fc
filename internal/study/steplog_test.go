package study

import (
	"fmt"
	"testing"
	"time"
)

// TestStepLog: each line stamped once, however the writes split it; a
// lab's messages reach the step's log only while it keeps them.
func TestStepLog(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 30, 1, 500e6, time.UTC)
	s := &stepLog{now: func() time.Time { return at }}
	fmt.Fprint(s, "step 1 at 0.0 s: kill db1")
	fmt.Fprint(s, ", held 3.0 s\nheal\n")
	var l *labLog
	l.into(s)() // a lab the study did not make: nothing to send
	l = &labLog{}
	fmt.Fprintln(l, "before: nowhere")
	stop := l.into(s)
	fmt.Fprintln(l, "db1: started again")
	stop()
	fmt.Fprintln(l, "after: nowhere")
	want := "22:30:01.500 step 1 at 0.0 s: kill db1, held 3.0 s\n22:30:01.500 heal\n22:30:01.500 db1: started again\n"
	if got := string(s.Bytes()); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
}
