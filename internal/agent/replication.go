package agent

import (
	"context"
	"database/sql"
	"strings"

	"github.com/hadrill/hadrill/internal/replication"
)

// Replication reads what /primary and /replica judge: read_only and every
// replication channel (SHOW ALL SLAVES STATUS needs SLAVE MONITOR).
func (p *Prober) Replication(ctx context.Context) (replication.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s replication.Snapshot
	db, err := p.conn()
	if err != nil {
		return s, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	if err := db.QueryRowContext(ctx, "SELECT @@read_only").Scan(&s.ReadOnly); err != nil {
		return s, timeoutReason(ctx, err, p.o.Timeout)
	}
	rows, err := db.QueryContext(ctx, "SHOW ALL SLAVES STATUS")
	if err != nil {
		return s, timeoutReason(ctx, err, p.o.Timeout)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return s, err
		}
		c := replication.Channel{}
		for i, name := range cols {
			if vals[i] == nil {
				c[strings.ToLower(name)] = "NULL"
			} else {
				c[strings.ToLower(name)] = string(vals[i])
			}
		}
		s.Channels = append(s.Channels, c)
	}
	return s, rows.Err()
}
