package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
)

// TestDieOf: hadrill, interrupted, ends by the signal that interrupted it
// once it has cleaned up (its caller's shell sees 128 and the signal, not
// a failure of hadrill's), SIGPIPE included, which Go's runtime ignores
// when a process sends it to itself. Each case runs in a child process.
func TestDieOf(t *testing.T) {
	if s := os.Getenv("HADRILL_TEST_DIE_OF"); s != "" {
		n, _ := strconv.Atoi(s)
		sig := syscall.Signal(n)
		signal.Notify(make(chan os.Signal, 1), sig) // caught, as interruptible catches it
		var out []*os.File
		if sig == syscall.SIGPIPE {
			out = []*os.File{os.Stdout}
		}
		dieOf(sig, out)
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		c := exec.Command(os.Args[0], "-test.run=^TestDieOf$")
		c.Env = append(os.Environ(), "HADRILL_TEST_DIE_OF="+strconv.Itoa(int(sig)))
		if sig == syscall.SIGPIPE { // its output a pipe whose reader went away
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			c.Stdout = w
			defer w.Close()
		}
		err := c.Run()
		var x *exec.ExitError
		if !errors.As(err, &x) {
			t.Errorf("%v: %v, want the process ended by it", sig, err)
			continue
		}
		if ws := x.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: ended with %v (status %d), want by the signal", sig, ws.Signal(), x.ExitCode())
		}
	}
}
