package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Roles is what a lab's primary clusters are now: each one's primary and
// the nodes kept out of replication. It lives in <lab>/roles.json, apart
// from lab.json, because the keeper changes it while commands hold the lab
// open (an automatic failover): a command that re-saves lab.json must not
// write back the primary it read when it started.
type Roles struct {
	// Primaries: cluster → its current primary.
	Primaries map[string]string `json:"primaries,omitempty"`
	// Fenced: node → why it stays read-only and outside replication (a
	// former primary holding transactions the current one never received).
	Fenced map[string]string `json:"fenced,omitempty"`
}

// RoleFile is one lab's roles.json and the lock that serializes changes
// of roles (a promotion, a failover, the roles given at start).
type RoleFile struct{ Dir string }

// RolesOf returns a lab's role file (dir: the lab's directory).
func RolesOf(dir string) RoleFile { return RoleFile{Dir: dir} }

func (f RoleFile) path() string { return filepath.Join(f.Dir, "roles.json") }

// Read returns the roles recorded (none: an empty record).
func (f RoleFile) Read() (Roles, error) {
	var r Roles
	b, err := os.ReadFile(f.path())
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s is damaged: %v", f.path(), err)
	}
	return r, nil
}

// Update changes the record atomically (read, change, write a new file,
// rename); callers hold the roles lock.
func (f RoleFile) Update(change func(*Roles)) error {
	r, err := f.Read()
	if err != nil {
		return err
	}
	change(&r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := f.path() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, f.path())
}

// Lock takes the lab's roles lock (flock on <lab>/roles.lock, released by
// the kernel if the holder dies), waiting until ctx ends; call the
// returned function to release it.
func (f RoleFile) Lock(ctx context.Context) (func(), error) {
	fd, err := os.OpenFile(filepath.Join(f.Dir, "roles.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(fd.Fd()), syscall.LOCK_UN); fd.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			fd.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			fd.Close()
			return nil, fmt.Errorf("waiting for the roles lock of %s: %w", f.Dir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
