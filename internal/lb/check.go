package lb

import (
	"context"
	"errors"
	"time"
)

// AskTimeout is how long one ask of a pair's health check waits for the
// proxy to answer before it counts as silent.
const AskTimeout = 800 * time.Millisecond

// Watch is the health check a pair's keepalived runs on each host
// (hadrill lb-check): it asks whether the proxy answers (alive), every
// 50 ms until window has passed since it began, and fails at the first
// silence — a refused or failed ask, or no answer within AskTimeout.
// keepalived runs it at most once a second, so watching most of that
// second notices a dead proxy in about 50 ms instead of up to a second.
//
// It ends within the longer of window and AskTimeout: keepalived counts a
// check that outlives its timeout as a failure, so a check that overran
// on a busy machine would move the address away from a healthy proxy.
// The first ask always has its whole AskTimeout (a hung proxy fails every
// run); a later ask that the window's end cuts short decides nothing (the
// next run asks again within a second).
func Watch(ctx context.Context, alive func(context.Context) error, window time.Duration) error {
	start := time.Now()
	end := start.Add(window)
	for first := true; ; first = false {
		deadline := time.Now().Add(AskTimeout)
		cut := false
		if !first && deadline.After(end) {
			deadline, cut = end, true
		}
		actx, cancel := context.WithDeadline(ctx, deadline)
		err := alive(actx)
		cancel()
		switch {
		case err != nil && cut && isTimeout(err) && ctx.Err() == nil:
			return nil // cut short by the window's end: no verdict
		case err != nil:
			return err
		}
		next := time.Now().Add(50 * time.Millisecond)
		if !next.Before(end) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(next)):
		}
	}
}

// isTimeout says whether err is a deadline passing (a context's, or a
// connection's deadline set from it).
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout()
}
