package lab

import (
	"context"

	"github.com/hadrill/hadrill/internal/galera/boot"
)

// Rebuild makes a replica of a primary cluster a fresh copy of its primary
// (see backup.Lab.Rebuild).
func (l *Lab) Rebuild(ctx context.Context, name string) error {
	return l.Backups().Rebuild(ctx, name, l.Replication(), l.start)
}

// Resync makes a Galera node join by a full state transfer (see
// boot.Resync).
func (l *Lab) Resync(ctx context.Context, name string) error {
	return boot.Resync(ctx, bootLab{l}, name)
}
