package hderr

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestJoin(t *testing.T) {
	cancelled := fmt.Errorf("waiting for db1: %w", context.Canceled)
	cases := []struct {
		name      string
		errs      []error
		msg       string
		user      bool
		cancelled bool
	}{
		{"none", []error{nil, nil}, "", false, false},
		{"user errors only: one user error, every problem in order", []error{User("--a: bad"), nil, Users([]string{"--b: bad", "--c: bad"})},
			"--a: bad\n--b: bad\n--c: bad", true, false},
		{"a runtime error among them: a runtime error with every message, still cancelled", []error{User("--a: bad"), cancelled},
			"--a: bad\nwaiting for db1: context canceled", false, true},
		{"runtime only", []error{errors.New("disk full")}, "disk full", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Join(c.errs)
			if c.msg == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != c.msg {
				t.Fatalf("message %q, want %q", err, c.msg)
			}
			if IsUser(err) != c.user {
				t.Errorf("IsUser %v, want %v", IsUser(err), c.user)
			}
			if errors.Is(err, context.Canceled) != c.cancelled {
				t.Errorf("errors.Is(context.Canceled) %v, want %v", errors.Is(err, context.Canceled), c.cancelled)
			}
		})
	}
}
