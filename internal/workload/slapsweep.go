package workload

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/slap"
)

// SlapOutcome is what `hadrill bench slap --output json` prints.
type SlapOutcome struct {
	RunID    string       `json:"run_id"`
	Target   string       `json:"target"`
	Results  []slap.Point `json:"results"`
	Warnings []string     `json:"warnings,omitempty"`
}

// Slap runs a mariadb-slap concurrency sweep from the client host and
// stores it. mariadb-slap prints timings even when queries or connections
// failed (and exits 0): such a run is stored with its errors as warnings
// and reported as failed.
func Slap(ctx context.Context, l Lab, e Endpoint, p slap.Params, command []string, log io.Writer) (_ *SlapOutcome, err error) {
	if p.Dataset == "employees" {
		if err := Employees(ctx, l, e, p.DatasetSize, log); err != nil {
			return nil, err
		}
	}
	run, err := NewRun(ctx, l, results.Slap, command, p)
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	dir := results.RunDir(l.Home(), run.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defaults, remove, err := credentials(ctx, l, dir, "slap-"+run.ID+".cnf", []byte(fmt.Sprintf("[client]\nuser=%s\npassword=%s\n", e.User, e.Password)))
	if err != nil {
		return nil, err
	}
	defer remove()
	fmt.Fprintf(log, "mariadb-slap on %s at concurrency %v, %d iteration(s)\n", e.Name, p.Concurrency, p.Iterations)
	out, runErr, stall := runLimited(ctx, l, "mariadb-slap", slap.Argv(p, defaults, e.Host, e.Port), 0)
	_ = os.WriteFile(filepath.Join(dir, "slap.out"), out, 0o644)
	if stall != nil {
		return nil, stall
	}
	res, perr := slap.Parse(string(out))
	if perr != nil {
		return nil, firstErr(perr, runErr)
	}
	run.Warnings = res.Errors
	if err := Finish(l, run, ctx.Err() != nil, res.Points); err != nil {
		return nil, err
	}
	o := &SlapOutcome{RunID: run.ID, Target: e.Name, Results: res.Points, Warnings: res.Errors}
	if len(res.Errors) > 0 {
		return o, fmt.Errorf("mariadb-slap reported errors, so its timings are not trustworthy (run %s): %s", run.ID, res.Errors[0])
	}
	return o, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
