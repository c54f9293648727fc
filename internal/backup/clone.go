package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sync"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Clone copies node from's data into dir on node to's host, ready to start
// a server on: mariabackup runs on from's host and streams straight into
// mbstream on to's host (through this computer's connections, nothing kept
// here), the copy is prepared there, and its binary log position is
// returned. dir must not exist; a failure leaves it half made, for the
// caller to remove. A Galera source is desynced meanwhile, as for a backup.
func (l *Lab) Clone(ctx context.Context, from, to *plan.Node, dir string, log io.Writer) (mariadb.BinlogInfo, error) {
	src, dst := l.Servers.Host(from.Host), l.Servers.Host(to.Host)
	if _, err := dst.Run(ctx, []string{"mkdir", "-p", dir}, nil); err != nil {
		return mariadb.BinlogInfo{}, err
	}
	galera := from.Kind == spec.KindGalera
	err := l.desynced(ctx, from, galera, func() error {
		return pipe(ctx, src, mariadb.BackupArgv(from.Socket, src.RunsAs(), from.Dir, galera), dst, mariadb.ExtractArgv(dir), log)
	})
	if err != nil {
		return mariadb.BinlogInfo{}, fmt.Errorf("%s: a copy for %s: %w", from.Name, to.Name, err)
	}
	out, err := dst.Run(ctx, mariadb.PrepareArgv(dir), nil)
	_, _ = log.Write(out)
	if err != nil {
		return mariadb.BinlogInfo{}, fmt.Errorf("%s: prepare the copy: %w", to.Name, err)
	}
	text, err := dst.ReadFile(ctx, path.Join(dir, "xtrabackup_binlog_info"))
	if err != nil {
		return mariadb.BinlogInfo{}, fmt.Errorf("%s: the copy has no binary log position: %w", to.Name, err)
	}
	return mariadb.ParseBinlogInfo(string(text))
}

// pipe runs srcArgv on src with its output as the input of dstArgv on dst,
// what both say on stderr appended to log; when one fails the other is
// ended, and the error names which, with the last lines it said.
func pipe(ctx context.Context, src host.Host, srcArgv []string, dst host.Host, dstArgv []string, log io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	var dstFirst bool // the destination failed first: the source's end is its doing
	fail := func(dst bool) { once.Do(func() { dstFirst = dst; cancel() }) }
	r, w := io.Pipe()
	var ssaid, dsaid bytes.Buffer
	derr := make(chan error, 1)
	go func() {
		err := dst.Attach(ctx, dstArgv, r, log, io.MultiWriter(log, &dsaid))
		if err != nil {
			fail(true)
		}
		r.CloseWithError(io.ErrClosedPipe) // what src writes now fails
		derr <- err
	}()
	serr := src.Attach(ctx, srcArgv, nil, w, io.MultiWriter(log, &ssaid))
	if serr != nil {
		fail(false)
	}
	w.Close()
	dErr := <-derr
	switch {
	case dErr != nil && (serr == nil || dstFirst):
		return fmt.Errorf("%s on %s: %w\n%s", dstArgv[0], dst.Name(), dErr, mariadb.LogTail(dsaid.String(), 5))
	case serr != nil:
		return fmt.Errorf("%s on %s: %w\n%s", srcArgv[0], src.Name(), serr, mariadb.LogTail(ssaid.String(), 5))
	}
	return nil
}
