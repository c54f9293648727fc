package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"
)

// servedWithin is how long a benchmark's step waits for its endpoint to
// take a session before it gives up: longer than a cluster's
// reconfiguration and a load balancer's checks marking a server up again
// (a few seconds), short enough that a lab with no writer says so.
const servedWithin = 30 * time.Second

// awaitServed waits until the endpoint takes a session from the client
// host, at most servedWithin. A benchmark started while it takes none (a
// load balancer whose servers a reconfiguration of their cluster had
// marked down for a moment) fails before it measures anything. An endpoint where nothing listens (a node stopped, a load
// balancer's proxy down) is not waited for: that is no moment's state.
// waited is 0 when the first try answered.
func awaitServed(ctx context.Context, l Lab, e Endpoint) (waited time.Duration, err error) {
	began := time.Now()
	for try := 1; ; try++ {
		err := e.ping(ctx, l)
		switch {
		case err == nil && try == 1:
			return 0, nil
		case err == nil:
			return time.Since(began), nil
		case ctx.Err() != nil:
			return time.Since(began), ctx.Err()
		case nothingListens(err):
			return time.Since(began), err
		case time.Since(began) >= servedWithin:
			return time.Since(began), fmt.Errorf("%s took no session from the client host for %.0f s: %v", e.Name, servedWithin.Seconds(), err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// served runs a benchmark's step (once) after its endpoint takes
// sessions. A step that ended before it started (unstarted: the tool
// could not open its sessions, so it measured nothing) runs once more,
// after the endpoint takes sessions again, and the log says so; a second
// such failure is the step's error. A step that started and failed is
// never repeated: what it measured is the run's.
func served(ctx context.Context, l Lab, e Endpoint, log io.Writer, what string, once func() (unstarted bool, err error)) error {
	return servedBy(ctx, func() (time.Duration, error) { return awaitServed(ctx, l, e) }, e.Name, log, what, once)
}

// runServed runs a tool's step through served: run gives its result and
// what it printed, unstarted reads that; began is when its last try
// began (a step's span on the run's time axis).
func runServed[R any](ctx context.Context, l Lab, e Endpoint, log io.Writer, what string, unstarted func(string) bool, run func() (R, string, error)) (res R, began time.Time, err error) {
	began = time.Now()
	err = served(ctx, l, e, log, what, func() (bool, error) {
		began = time.Now()
		r, out, rerr := run()
		res = r
		return unstarted(out), rerr
	})
	return res, began, err
}

// servedBy is served with the wait for the endpoint (named name) given.
func servedBy(ctx context.Context, await func() (time.Duration, error), name string, log io.Writer, what string, once func() (unstarted bool, err error)) error {
	for attempt := 1; ; attempt++ {
		waited, err := await()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if waited > 0 {
			fmt.Fprintf(log, "%s waited %.1f s for %s to take a session\n", what, waited.Seconds(), name)
		}
		unstarted, err := once()
		if err == nil || !unstarted || attempt == 2 || ctx.Err() != nil {
			return err
		}
		why, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(log, "%s could not open its sessions to %s, so it measured nothing (%s); it runs again once %s takes a session\n", what, name, why, name)
	}
}

// nothingListens says whether a connection was refused: no process
// listens at the address (through a host over SSH, its words).
func nothingListens(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(strings.ToLower(err.Error()), "connection refused")
}
