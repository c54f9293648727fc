// Package hosttest is a stand-in host.Host for unit tests of rooms that
// read and write a host's files (never used against a lab).
package hosttest

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/hadrill/hadrill/internal/host"
)

// Files is a host whose files are a map (path → text) and which runs
// nothing; what else a room asks of it panics (host.Host is nil).
type Files struct {
	host.Host
	mu    sync.Mutex
	files map[string]string
}

// New is a host holding files (path → text; nil: none).
func New(files map[string]string) *Files {
	if files == nil {
		files = map[string]string{}
	}
	return &Files{files: files}
}

// ReadFile reads a file; a missing one is os.ErrNotExist.
func (h *Files) ReadFile(_ context.Context, path string) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.files[path]
	if !ok {
		return nil, os.ErrNotExist
	}
	return []byte(s), nil
}

// WriteFile replaces a file's text.
func (h *Files) WriteFile(_ context.Context, path string, data []byte, _ os.FileMode) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[path] = string(data)
	return nil
}

// RemoveAll removes a file.
func (h *Files) RemoveAll(_ context.Context, path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.files, path)
	return nil
}

// Run runs nothing: every command fails.
func (h *Files) Run(context.Context, []string, io.Reader) ([]byte, error) {
	return nil, errors.New("this host runs nothing")
}

// File is a file's text ("" when missing).
func (h *Files) File(path string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.files[path]
}
