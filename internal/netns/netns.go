// Package netns runs code inside a named network namespace (/run/netns/NAME):
// dialing a socket there lets hadrill reach lab hosts without putting any
// address or route into the root namespace.
package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is where iproute2 keeps named namespaces.
const Dir = "/run/netns"

// Exists reports whether a named namespace exists.
func Exists(name string) bool {
	_, err := os.Stat(filepath.Join(Dir, name))
	return err == nil
}

// List returns the named namespaces that start with prefix.
func List(prefix string) []string {
	entries, _ := os.ReadDir(Dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// Dial connects to addr from inside namespace name ("" dials from here).
// The socket is created in the namespace and stays there.
func Dial(ctx context.Context, name, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if name == "" {
		return d.DialContext(ctx, network, addr)
	}
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		c, err, restored := dialIn(ctx, name, network, addr)
		if restored {
			runtime.UnlockOSThread()
		} // otherwise the thread ends with this goroutine, never reused in the wrong namespace
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func dialIn(ctx context.Context, name, network, addr string) (net.Conn, error, bool) {
	self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err), true
	}
	defer unix.Close(self)
	target, err := unix.Open(filepath.Join(Dir, name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", name, err), true
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("netns %s: enter: %w", name, err), true
	}
	var d net.Dialer
	c, derr := d.DialContext(ctx, network, addr)
	restored := unix.Setns(self, unix.CLONE_NEWNET) == nil
	return c, derr, restored
}

// Wrap prefixes argv so it runs inside namespace name ("" leaves it as is).
func Wrap(name string, argv []string) []string {
	if name == "" {
		return argv
	}
	return append([]string{"ip", "netns", "exec", name}, argv...)
}
