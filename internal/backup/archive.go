package backup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hadrill/hadrill/internal/plan"
)

// ArchiveDir is where a node's binary logs are archived.
func ArchiveDir(p *plan.Plan, node string) string { return filepath.Join(p.Archive, node) }

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
