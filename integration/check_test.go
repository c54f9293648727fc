package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheck: a history checked from a file: a stale read is valid for
// serializable and not for strict serializable (exit 5, named first, with
// its example); a malformed history is refused naming each bad line.
func TestCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.writeSpec("stale.jsonl", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "node": "db1", "value": [["append", 1, 1]]}
{"index": 1, "time": 2, "process": 0, "type": "ok", "f": "txn", "node": "db1", "value": [["append", 1, 1]]}
{"index": 2, "time": 3, "process": 1, "type": "invoke", "f": "txn", "node": "db2", "value": [["r", 1, null]]}
{"index": 3, "time": 4, "process": 1, "type": "ok", "f": "txn", "node": "db2", "value": [["r", 1, []]]}
{"index": 4, "time": 5, "process": 2, "type": "invoke", "f": "txn", "node": "db3", "value": [["r", 1, null]]}
{"index": 5, "time": 6, "process": 2, "type": "ok", "f": "txn", "node": "db3", "value": [["r", 1, [1]]]}
`)
	r := e.run("check", h)
	if r.code != 5 || !strings.HasPrefix(strings.SplitN(r.stdout, "\n", 2)[1], "not strict-serializable: G-single-realtime") ||
		!strings.Contains(r.stdout, "T0 completed before T1 began (realtime)") {
		t.Errorf("a stale read under strict serializability: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		Valid     bool `json:"valid"`
		Anomalies []struct {
			Type      string `json:"type"`
			Forbidden bool   `json:"forbidden"`
		} `json:"anomalies"`
	}
	r = e.run("check", h, "--model", "serializable", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || !res.Valid || len(res.Anomalies) != 1 || res.Anomalies[0].Forbidden {
		t.Errorf("the same under serializability: exit %d %v %+v", r.code, err, res)
	}
	// a long fork, written by hand: db2 saw key 1's append and not key
	// 2's, db3 the other way round; snapshot isolation forbids it, read
	// committed allows it
	fork := e.writeSpec("fork.jsonl", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "node": "db1", "value": [["append", 1, 1]]}
{"index": 1, "time": 1, "process": 1, "type": "invoke", "f": "txn", "node": "db1", "value": [["append", 2, 1]]}
{"index": 2, "time": 2, "process": 2, "type": "invoke", "f": "txn", "node": "db2", "value": [["r", 1, null], ["r", 2, null]]}
{"index": 3, "time": 2, "process": 3, "type": "invoke", "f": "txn", "node": "db3", "value": [["r", 1, null], ["r", 2, null]]}
{"index": 4, "time": 9, "process": 2, "type": "ok", "f": "txn", "node": "db2", "value": [["r", 1, [1]], ["r", 2, []]]}
{"index": 5, "time": 9, "process": 3, "type": "ok", "f": "txn", "node": "db3", "value": [["r", 1, []], ["r", 2, [1]]]}
{"index": 6, "time": 10, "process": 0, "type": "ok", "f": "txn", "node": "db1", "value": [["append", 1, 1]]}
{"index": 7, "time": 10, "process": 1, "type": "ok", "f": "txn", "node": "db1", "value": [["append", 2, 1]]}
`)
	r = e.run("check", fork, "--model", "snapshot-isolation")
	if r.code != 5 || !strings.Contains(r.stdout, "not snapshot-isolation: long-fork\n") || !strings.Contains(r.stdout, "long-fork: 2 reads (forbidden)") ||
		!strings.Contains(r.stdout, "T2 (process 2, db2, ok) and T3 (process 3, db3, ok) saw T0's and T1's writes in opposite orders") {
		t.Errorf("a long fork under snapshot isolation: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("check", fork, "--model", "read-committed"); r.code != 0 || !strings.Contains(r.stdout, "long-fork: 2 reads (allowed by read-committed)") {
		t.Errorf("a long fork under read committed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bad := e.writeSpec("bad.jsonl", `{"index": 0, "time": 1, "process": 0, "type": "begin", "f": "txn", "value": []}
{oops
`)
	if r := e.run("check", bad, "--model", "acid"); r.code != 2 || !strings.Contains(r.stderr, "--model: expected one of") {
		t.Errorf("bad model: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("check", bad); r.code != 2 || !strings.Contains(r.stderr, "line 1: type: expected invoke, ok, fail or info") || !strings.Contains(r.stderr, "line 2:") {
		t.Errorf("bad history: exit %d %s", r.code, r.stderr)
	}
}

// TestCheckInterrupted (the review's M3): check of a named pipe nobody
// writes ends at SIGTERM, and at SIGINT, by that signal; an empty history is
// refused (M5).
func TestCheckInterrupted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fifo := filepath.Join(t.TempDir(), "history.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		c := e.cmd("check", fifo)
		var errb bytes.Buffer
		c.Stderr = &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		start := time.Now()
		_ = c.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			var x *exec.ExitError
			if !errors.As(err, &x) || statusOf(x) != 128+int(sig) || !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("%v: %v %s", sig, err, errb.String())
			}
			t.Logf("%v: ended %v after the signal", sig, time.Since(start).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			_ = c.Process.Kill()
			<-done
			t.Errorf("%v: check of a pipe nobody writes did not end", sig)
		}
	}
	empty := e.writeSpec("empty.jsonl", "")
	if r := e.run("check", empty); r.code != 2 || !strings.Contains(r.stderr, "the history holds no operations") {
		t.Errorf("an empty history: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("check", t.TempDir()); r.code != 2 || !strings.Contains(r.stderr, "is a directory") {
		t.Errorf("a directory: exit %d %s", r.code, r.stderr)
	}
}
