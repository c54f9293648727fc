package lb

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWatch: a check ends within its window (or one ask's timeout) whatever
// the proxy does, fails at the first refusal or silence, and an ask the
// window's end cuts short decides nothing.
func TestWatch(t *testing.T) {
	refused := errors.New("connect: connection refused")
	// answers: how each ask goes, by its number (0 first): nil answers at once
	silentFrom := func(k int) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			if i < k {
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		}
	}
	for _, c := range []struct {
		name    string
		ask     func(context.Context, int) error
		window  time.Duration
		wantErr bool
		max     time.Duration // it must end within this
	}{
		{"healthy", func(context.Context, int) error { return nil }, 300 * time.Millisecond, false, 300*time.Millisecond + 60*time.Millisecond},
		{"refused at once", func(context.Context, int) error { return refused }, 300 * time.Millisecond, true, 50 * time.Millisecond},
		{"refused later", func(_ context.Context, i int) error {
			if i == 3 {
				return refused
			}
			return nil
		}, 800 * time.Millisecond, true, 300 * time.Millisecond},
		{"hung from the start", silentFrom(0), 300 * time.Millisecond, true, AskTimeout + 100*time.Millisecond},
		// silent from the third ask, 100 ms into a 400 ms window: the ask is cut at the window's end, no verdict
		{"silent late in the window", silentFrom(2), 400 * time.Millisecond, false, 400*time.Millisecond + 60*time.Millisecond},
		{"one ask", func(context.Context, int) error { return nil }, 0, false, 50 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			i := 0
			start := time.Now()
			err := Watch(context.Background(), func(ctx context.Context) error { defer func() { i++ }(); return c.ask(ctx, i) }, c.window)
			took := time.Since(start)
			if (err != nil) != c.wantErr {
				t.Errorf("err %v, want error %v", err, c.wantErr)
			}
			if took > c.max {
				t.Errorf("took %v, want at most %v", took, c.max)
			}
		})
	}
}
