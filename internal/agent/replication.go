package agent

import (
	"context"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/replication"
)

// Replication reads what /primary and /replica judge: read_only and every
// replication channel (SHOW ALL SLAVES STATUS needs SLAVE MONITOR).
func (p *Prober) Replication(ctx context.Context) (replication.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, err := p.readReplication(ctx)
	now := time.Now()
	switch {
	case err == nil:
		p.goodRepl, p.goodAt, p.goodReplPid = &s, now, p.runningPid()
	case p.goodRepl != nil && keeps(err, p.same(p.goodReplPid), p.goodAt, now, p.o.BusyGrace):
		kept := *p.goodRepl // what a busy server last answered
		kept.Drained, kept.Deposed = s.Drained, s.Deposed
		return kept, nil
	default:
		p.goodRepl = nil
	}
	return s, err
}

func (p *Prober) readReplication(ctx context.Context) (replication.Snapshot, error) {
	var s replication.Snapshot
	s.Drained, s.Deposed = p.drained(), p.deposed()
	db, err := p.conn()
	if err != nil {
		return s, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	if err := db.QueryRowContext(ctx, "SELECT @@read_only").Scan(&s.ReadOnly); err != nil {
		return s, timeoutReason(ctx, err, p.o.Timeout)
	}
	chans, err := mariadb.Replicas(ctx, db)
	if err != nil {
		return s, timeoutReason(ctx, err, p.o.Timeout)
	}
	for _, c := range chans {
		s.Channels = append(s.Channels, replication.Channel(c))
	}
	return s, nil
}
