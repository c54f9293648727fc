package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/workload/employees"
)

// Employees loads the employees-shaped dataset at a size through the
// endpoint, or keeps the one there when it has that size. A schema named
// employees that hadrill did not make is never touched; one of another
// size that it made is dropped and made again.
func Employees(ctx context.Context, l Lab, e Endpoint, size float64, log io.Writer) error {
	if size < employees.MinSize || size > employees.MaxSize {
		return hderr.User("--dataset-size: expected %g to %g (a fraction of the sample database's 300,024 employees), got %g", employees.MinSize, employees.MaxSize, size)
	}
	db, err := e.Open(l)
	if err != nil {
		return err
	}
	defer db.Close()
	var have float64
	err = db.QueryRowContext(ctx, "SELECT size FROM "+employees.Schema+"."+employees.Marker).Scan(&have)
	switch {
	case err == nil && have == size:
		fmt.Fprintf(log, "reusing the employees dataset (size %g)\n", size)
		return nil
	case err == nil:
		fmt.Fprintf(log, "dropping the employees dataset of size %g\n", have)
		if _, err := db.ExecContext(ctx, "DROP DATABASE "+employees.Schema); err != nil {
			return err
		}
	default:
		var name string
		if err := db.QueryRowContext(ctx, "SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?", employees.Schema).Scan(&name); err == nil {
			return hderr.User("--dataset: schema %s exists on %s and was not made by hadrill (it has no %s table); it is left alone: drop it yourself to load the dataset", employees.Schema, e.Name, employees.Marker)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	stmts := employees.Statements(size)
	fmt.Fprintf(log, "generating the employees dataset: %d employees, about %d rows\n", employees.Employees(size), employees.Rows(size))
	t0 := time.Now()
	wctx, stop := watchIdle(ctx, l, "generating the employees dataset")
	for i, s := range stmts {
		if _, err := db.ExecContext(wctx, s); err != nil {
			if stall := stop(); stall != nil {
				err = stall
			}
			// ours, and incomplete (no marker yet): removed, not left half made
			_, derr := db.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+employees.Schema)
			return errors.Join(fmt.Errorf("generating the employees dataset (statement %d of %d): %w", i+1, len(stmts), err), derr)
		}
	}
	_ = stop()
	fmt.Fprintf(log, "employees dataset ready in %s\n", time.Since(t0).Round(100*time.Millisecond))
	return nil
}
