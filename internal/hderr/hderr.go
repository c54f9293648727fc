// Package hderr separates user mistakes (bad input: exit 2) from runtime
// failures (exit 1). Library code returns errors; only cmd/ decides exit codes.
package hderr

import (
	"errors"
	"fmt"
	"strings"
)

// UserError is bad input: a spec problem, an unknown node, a taken name.
// Each line is one problem, already naming the field or argument.
type UserError struct {
	Problems []string
}

func (e *UserError) Error() string { return strings.Join(e.Problems, "\n") }

// User builds a UserError with one formatted problem.
func User(format string, args ...any) error {
	return &UserError{Problems: []string{fmt.Sprintf(format, args...)}}
}

// Users builds a UserError from several problems; nil when there are none.
func Users(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return &UserError{Problems: problems}
}

// IsUser reports whether err (or anything it wraps) is bad input.
func IsUser(err error) bool {
	var u *UserError
	return errors.As(err, &u)
}

// Join gathers the problems of several errors into one user error (every
// problem of every error, in order). Any error that is not bad input makes
// the result a runtime error carrying all the messages, through which the
// runtime errors themselves are still found (errors.Is, errors.As); the
// user errors among them are only in its message, so it is not bad input.
func Join(errs []error) error {
	var problems []string
	var runtime []error
	for _, e := range errs {
		var u *UserError
		if errors.As(e, &u) {
			problems = append(problems, u.Problems...)
		} else if e != nil {
			problems, runtime = append(problems, e.Error()), append(runtime, e)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if len(runtime) > 0 {
		return &joined{msg: strings.Join(problems, "\n"), errs: runtime}
	}
	return &UserError{Problems: problems}
}

// joined is Join's runtime error: every message, and the runtime errors
// to unwrap.
type joined struct {
	msg  string
	errs []error
}

func (j *joined) Error() string   { return j.msg }
func (j *joined) Unwrap() []error { return j.errs }
