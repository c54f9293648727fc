package study

import (
	"bytes"
	"fmt"
	"testing"
)

// TestLabLog: a lab's messages reach the step's log only while it keeps
// them; a lab the study did not make has none to send.
func TestLabLog(t *testing.T) {
	var b bytes.Buffer
	var l *labLog
	l.into(&b)()
	l = &labLog{}
	fmt.Fprintln(l, "before: nowhere")
	stop := l.into(&b)
	fmt.Fprintln(l, "db1: started again")
	stop()
	fmt.Fprintln(l, "after: nowhere")
	if got := b.String(); got != "db1: started again\n" {
		t.Errorf("log: %q", got)
	}
}
