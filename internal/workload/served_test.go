package workload

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServed: a step waits for its endpoint, runs once more only when it
// could not start (it measured nothing), never when it started and
// failed, and says what it did.
func TestServed(t *testing.T) {
	refused := errors.New("go-tpc run: exit status 2: panic: failed to connect to database when loading data")
	broke := errors.New("go-tpc run: exit status 1: Error 1213")
	type attempt struct {
		unstarted bool
		err       error
	}
	for _, c := range []struct {
		name     string
		waits    []time.Duration
		waitErr  error
		attempts []attempt
		runs     int
		err      error
		log      []string
		notLog   []string
	}{
		{name: "served at once", attempts: []attempt{{}}, runs: 1, notLog: []string{"waited", "runs again"}},
		{name: "waited for the endpoint", waits: []time.Duration{1500 * time.Millisecond}, attempts: []attempt{{}}, runs: 1,
			log: []string{"go-tpc waited 1.5 s for lb to take a session"}},
		{name: "could not start, then ran", attempts: []attempt{{true, refused}, {}}, runs: 2,
			log: []string{"go-tpc could not open its sessions to lb, so it measured nothing (go-tpc run: exit status 2: panic: failed to connect to database when loading data); it runs again once lb takes a session"}},
		{name: "could not start twice", attempts: []attempt{{true, refused}, {true, refused}}, runs: 2, err: refused},
		{name: "started and failed: never repeated", attempts: []attempt{{false, broke}}, runs: 1, err: broke, notLog: []string{"runs again"}},
		{name: "no session within the wait", waitErr: errors.New("lb took no session from the client host for 30 s: EOF"), runs: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			waits, runs := c.waits, 0
			await := func() (time.Duration, error) {
				if c.waitErr != nil {
					return servedWithin, c.waitErr
				}
				if len(waits) == 0 {
					return 0, nil
				}
				w := waits[0]
				waits = waits[1:]
				return w, nil
			}
			err := servedBy(context.Background(), await, "lb", &log, "go-tpc", func() (bool, error) {
				a := c.attempts[runs]
				runs++
				return a.unstarted, a.err
			})
			switch {
			case c.waitErr != nil:
				if err == nil || !strings.Contains(err.Error(), "go-tpc: lb took no session") {
					t.Errorf("err %v", err)
				}
			case c.err == nil && err != nil, c.err != nil && !errors.Is(err, c.err):
				t.Errorf("err %v, want %v", err, c.err)
			}
			if runs != c.runs {
				t.Errorf("%d runs, want %d", runs, c.runs)
			}
			for _, s := range c.log {
				if !strings.Contains(log.String(), s) {
					t.Errorf("log lacks %q:\n%s", s, log.String())
				}
			}
			for _, s := range c.notLog {
				if strings.Contains(log.String(), s) {
					t.Errorf("log has %q:\n%s", s, log.String())
				}
			}
		})
	}
}

// TestNothingListens: a refused connection (nothing listens there, here
// or through a host over SSH) is told from a load balancer that took
// the connection and closed it (no server behind it for a moment).
func TestNothingListens(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{errors.New("ssh: rejected: connect failed (Connection refused)"), true},
		{errors.New("invalid connection"), false},
		{io.EOF, false},
	} {
		if got := nothingListens(c.err); got != c.want {
			t.Errorf("nothingListens(%v) = %v", c.err, got)
		}
	}
}
