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
	var c net.Conn
	err := Do(name, func() (err error) { c, err = d.DialContext(ctx, network, addr); return err })
	return c, err
}

// ListenPacket opens a packet socket bound to addr inside namespace name.
func ListenPacket(name, network, addr string) (net.PacketConn, error) {
	var c net.PacketConn
	err := Do(name, func() (err error) { c, err = net.ListenPacket(network, addr); return err })
	return c, err
}

// Do runs f on an OS thread of its own inside namespace name ("": this
// process's own, where f simply runs). Sockets f creates stay in that
// namespace. If the thread cannot be moved back, it ends with its
// goroutine and is never reused in the wrong namespace.
func Do(name string, f func() error) error {
	if name == "" {
		return f()
	}
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := in(name, f)
		if restored {
			runtime.UnlockOSThread()
		}
		ch <- err
	}()
	return <-ch
}

// Wrap prefixes argv so it runs inside namespace name ("" leaves it as is).
func Wrap(name string, argv []string) []string {
	if name == "" {
		return argv
	}
	return append([]string{"ip", "netns", "exec", name}, argv...)
}

// in runs f with the calling (locked) thread inside namespace name and
// moves the thread back; restored is false only when that failed.
func in(name string, f func() error) (restored bool, err error) {
	self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("netns: %w", err)
	}
	defer unix.Close(self)
	target, err := unix.Open(filepath.Join(Dir, name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("netns %s: %w", name, err)
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return true, fmt.Errorf("netns %s: enter: %w", name, err)
	}
	err = f()
	return unix.Setns(self, unix.CLONE_NEWNET) == nil, err
}
