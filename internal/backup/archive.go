package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// ArchiveDir is where a node's binary logs are archived.
func ArchiveDir(p *plan.Plan, node string) string { return filepath.Join(p.Archive, node) }

// Archive copies what is new in a node's binary logs into its archive
// here: read where they are on this computer, pulled over the connection
// from a remote host.
func (l *Lab) Archive(ctx context.Context, n *plan.Node) error {
	dir := ArchiveDir(l.Plan, n.Name)
	if l.Plan.Mode == plan.ModeSSH {
		return PullBinlogs(ctx, l.Servers.Host(n.Host), n, dir)
	}
	return ArchiveBinlogs(n, dir)
}

// ArchiveBinlogs copies what is new in a node's binary logs into dir.
// Binary logs only grow (and are never rewritten), so each file is copied
// from where its archived copy ends.
func ArchiveBinlogs(n *plan.Node, dir string) error {
	files, err := Binlogs(n.Binlogs())
	if err != nil || len(files) == 0 {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for _, f := range files {
		if err := appendNew(filepath.Join(n.Binlogs(), f), filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// Binlogs lists the binary log files in a directory, oldest first.
func Binlogs(dir string) ([]string, error) {
	entries, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "binlog.") && !strings.HasSuffix(name, ".index") && !strings.HasSuffix(name, ".state") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// readDir lists a directory that may not exist yet (no backups, nothing
// archived): then it holds nothing.
func readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}

func appendNew(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	si, err := in.Stat()
	if err != nil {
		return err
	}
	have := int64(0)
	if di, err := os.Stat(dst); err == nil {
		have = di.Size()
	}
	if si.Size() <= have {
		return nil
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	if _, err := in.Seek(have, io.SeekStart); err != nil {
		out.Close()
		return err
	}
	if _, err := out.Seek(have, io.SeekStart); err != nil {
		out.Close()
		return err
	}
	_, err = io.CopyN(out, in, si.Size()-have)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// pullScript prints, for each binary log in the directory $1, a line
// "NAME COUNT" and then COUNT bytes: what follows the first HAVE bytes
// (given as NAME=HAVE after $1; 0 when not given), at most $2 bytes of
// it (the rest comes next time).
const pullScript = `cd "$1" 2>/dev/null || exit 0
max=$2; shift 2
for f in binlog.[0-9]*; do
	[ -f "$f" ] || continue
	have=0
	for a in "$@"; do [ "${a%%=*}" = "$f" ] && have=${a#*=}; done
	size=$(stat -c %s "$f") || continue
	n=$((size - have))
	[ "$n" -gt 0 ] || n=0
	[ "$n" -le "$max" ] || n=$max
	echo "$f $n"
	[ "$n" -eq 0 ] || tail -c +$((have + 1)) "$f" | head -c "$n"
done
exit 0`

// pullMax bounds what one pull fetches of a file (a burst of writes is
// archived over a few rounds, not held in memory at once).
const pullMax = 32 << 20

// PullBinlogs copies what is new in a node's binary logs on its host into
// dir here, in one round trip (a remote node's binary logs are archived
// off its machine).
func PullBinlogs(ctx context.Context, h host.Host, n *plan.Node, dir string) error {
	have, err := Binlogs(dir)
	if err != nil {
		return err
	}
	argv := []string{"sh", "-c", pullScript, "sh", n.Binlogs(), fmt.Sprint(pullMax)}
	sizes := map[string]int64{}
	for _, f := range have {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		sizes[f] = fi.Size()
		argv = append(argv, fmt.Sprintf("%s=%d", f, fi.Size()))
	}
	out, err := h.Run(ctx, argv, nil)
	if err != nil {
		return err
	}
	chunks, err := parsePull(out)
	if err != nil {
		return fmt.Errorf("%s: %w", h.Name(), err)
	}
	if len(chunks) > 0 {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
	}
	for _, c := range chunks {
		if len(c.data) == 0 {
			continue
		}
		if err := appendAt(filepath.Join(dir, c.name), sizes[c.name], c.data); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return nil
}

// chunk is what a pull brought of one binary log: the bytes after those
// the archive has.
type chunk struct {
	name string
	data []byte
}

var binlogName = regexp.MustCompile(`^binlog\.[0-9]+$`)

// parsePull reads pullScript's output. A name that is not a binary log's
// (a host's answer never names a path here) or a count the output does
// not hold is an error.
func parsePull(out []byte) ([]chunk, error) {
	var chunks []chunk
	for len(out) > 0 {
		line, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("binary log pull: a header without its end: %q", line)
		}
		name, count, ok := strings.Cut(string(line), " ")
		n, err := strconv.Atoi(count)
		switch {
		case !ok || err != nil || n < 0:
			return nil, fmt.Errorf("binary log pull: expected \"NAME COUNT\", got %q", line)
		case !binlogName.MatchString(name):
			return nil, fmt.Errorf("binary log pull: %q is not a binary log's name", name)
		case n > len(rest):
			return nil, fmt.Errorf("binary log pull: %s: %d bytes announced, %d came", name, n, len(rest))
		}
		chunks = append(chunks, chunk{name: name, data: rest[:n]})
		out = rest[n:]
	}
	return chunks, nil
}

// appendAt writes data into path at offset at (the archive's size when the
// pull was asked for).
func appendAt(path string, at int64, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, at); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
