package workload

import (
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestOutcomes: what an error means for a transaction's outcome. Only the
// server's own word that it rolled back is a certain failure once the
// transaction wrote; at COMMIT, every other error leaves it unknown.
func TestOutcomes(t *testing.T) {
	my := func(n uint16) error { return &mysql.MySQLError{Number: n} }
	for _, c := range []struct {
		err          error
		wrote        bool
		stmt, commit string
	}{
		{my(1213), true, "fail", "fail"},
		{my(1020), true, "fail", "fail"},
		{my(1205), true, "fail", "fail"},
		{my(1180), true, "info", "info"}, // error 6 during COMMIT: the node left the primary component
		{my(1047), true, "info", "info"}, // not prepared: the node left the primary component mid-transaction
		{my(1047), false, "fail", "info"},
		{errors.New("invalid connection"), true, "info", "info"},
		{errors.New("invalid connection"), false, "fail", "info"},
	} {
		if got := statementFailed(c.wrote, c.err); got != c.stmt {
			t.Errorf("a statement's %v after a write %v: %s, want %s", c.err, c.wrote, got, c.stmt)
		}
		if got, _ := commitFailed(c.err); got != c.commit {
			t.Errorf("COMMIT's %v: %s, want %s", c.err, got, c.commit)
		}
	}
}
