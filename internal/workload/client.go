package workload

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hadrill/hadrill/internal/host"
)

// client is the lab's client host, where load runs.
func client(l Lab) host.Host { return l.Host(l.Plan().Client.Host) }

// combined runs argv with its standard error joined to its output (what
// sysbench and mariadb-slap say of a failure goes to either).
func combined(argv []string) []string {
	return append([]string{"sh", "-c", `exec "$@" 2>&1`, "sh"}, argv...)
}

// credentials writes a 0600 file of connection options on the client host
// for a client program to read, beside the lab's own client options (in
// runDir when there are none: servers outside any lab are loaded from
// here); remove deletes it again: credentials do not stay behind.
func credentials(ctx context.Context, l Lab, runDir, name string, data []byte) (path string, remove func(), err error) {
	dir := runDir
	if f := l.Plan().Client.DefaultsFile; f != "" {
		dir = filepath.Dir(f)
	}
	h := client(l)
	path = filepath.Join(dir, name)
	if err := h.WriteFile(ctx, path, data, 0o600); err != nil {
		return "", nil, fmt.Errorf("writing %s on %s: %w", path, h.Name(), err)
	}
	return path, func() { _ = h.RemoveAll(context.WithoutCancel(ctx), path) }, nil
}
