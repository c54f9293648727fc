package mariadb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// CheckOverrides asks this computer's mariadbd how it reads each config
// override: `mariadbd --verbose --help` parses an option file and starts
// nothing, and says what it refuses (an unknown or ambiguous name, a value
// it cannot read) and what it adjusts (a value out of range), in its own
// words. The result is keyed by the override's key; ok is false when no
// mariadbd is installed here (nothing was asked).
func CheckOverrides(ctx context.Context, config map[string]string) (problems map[string]string, ok bool, err error) {
	if _, err := exec.LookPath("mariadbd"); err != nil {
		return nil, false, nil
	}
	dir, err := os.MkdirTemp("", "hadrill-options-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	problems = map[string]string{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	i := 0
	for key, value := range config {
		i++
		file := filepath.Join(dir, fmt.Sprintf("%d.cnf", i))
		line := key
		if value != "" {
			line += " = " + value
		}
		g.Go(func() error {
			if err := os.WriteFile(file, []byte("[mariadbd]\n"+line+"\n"), 0o600); err != nil {
				return err
			}
			out, _ := exec.CommandContext(gctx, "mariadbd", "--defaults-file="+file, "--verbose", "--help").CombinedOutput()
			if gctx.Err() != nil {
				return gctx.Err()
			}
			if said := serverSays(string(out)); said != "" {
				mu.Lock()
				problems[key] = said
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, false, err
	}
	return problems, true, nil
}

// serverLine is a line of the server's log: its time, level and words.
var serverLine = regexp.MustCompile(`^\d{4}-\d\d-\d\d\s+\d+:\d\d:\d\d \d+ \[(ERROR|Warning)\] (?:Buffered error: )?(.*)$`)

// serverSays is what mariadbd's option parsing refused or adjusted, its
// lines joined ("" when nothing): errors, and warnings about an option's
// value (not those of a machine's limits or a missing system table).
func serverSays(out string) string {
	var said []string
	for _, l := range strings.Split(out, "\n") {
		m := serverLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || m[1] == "Warning" && !strings.HasPrefix(m[2], "option '") {
			continue
		}
		if w := strings.TrimPrefix(m[2], "mariadbd: "); !containsLine(said, w) {
			said = append(said, w)
		}
	}
	return strings.Join(said, "; ")
}

func containsLine(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}
