package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// A runner is hadrill's copy on a remote host answering a controller's
// commands over one standing SSH session (`hadrill host --root DIR
// runner`), instead of a session per command: opening a session costs a
// few round trips to the host plus its login shell (which sources the
// user's shell start-up files), a command through the runner one round
// trip and an exec. Frames both ways are a 4-byte big-endian length and a
// JSON value: first the runner's Hello, then Requests in and Replies out,
// matched by ID, any number at once.

// Hello is the runner's first frame: the version of the copy answering.
type Hello struct {
	Version string `json:"version"`
}

// Request runs Argv with Stdin as its standard input; Cancel instead kills
// the request of that ID (its process group), which then replies.
type Request struct {
	ID     uint64   `json:"id"`
	Argv   []string `json:"argv,omitempty"`
	Stdin  []byte   `json:"stdin,omitempty"`
	Cancel bool     `json:"cancel,omitempty"`
}

// Reply is how a request ended: its exit status (-1: killed by a signal),
// what it wrote (each stream at most MaxRunOutput), or Error when it could
// not be started.
type Reply struct {
	ID     uint64 `json:"id"`
	Code   int    `json:"code"`
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Bounds of a runner's traffic: standard input a request carries (larger
// input goes through a session of its own), output a reply keeps, and so
// the largest frame.
const (
	MaxRunInput  = 1 << 20
	MaxRunOutput = 64 << 20
	maxFrame     = 2*MaxRunOutput*4/3 + 1<<20
)

// WriteFrame writes v as one frame.
func WriteFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	frame := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(frame, uint32(len(b)))
	_, err = w.Write(append(frame, b...))
	return err
}

// ReadFrame reads one frame into v.
func ReadFrame(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return fmt.Errorf("runner: a frame of %d bytes (at most %d)", size, maxFrame)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Runner answers requests read from in until it ends (the controller
// closed the session), then kills what still runs and returns. Each
// command runs in a process group of its own, so a cancel ends what it
// started too (a daemon it starts leaves the group: supervise gives it a
// session of its own).
func Runner(version string, in io.Reader, out io.Writer) error {
	var mu sync.Mutex // one frame at a time on out
	send := func(v any) error {
		mu.Lock()
		defer mu.Unlock()
		return WriteFrame(out, v)
	}
	if err := send(Hello{Version: version}); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }() // what still runs is killed
	var rmu sync.Mutex
	running := map[uint64]context.CancelFunc{}
	for {
		var req Request
		if err := ReadFrame(in, &req); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		if req.Cancel {
			rmu.Lock()
			if cancel := running[req.ID]; cancel != nil {
				cancel()
			}
			rmu.Unlock()
			continue
		}
		rctx, cancel := context.WithCancel(ctx)
		rmu.Lock()
		running[req.ID] = cancel
		rmu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply := runOne(rctx, req)
			rmu.Lock()
			delete(running, req.ID)
			rmu.Unlock()
			cancel()
			_ = send(reply)
		}()
	}
}

func runOne(ctx context.Context, req Request) Reply {
	reply := Reply{ID: req.ID, Code: -1}
	if len(req.Argv) == 0 {
		reply.Error = "runner: an empty command"
		return reply
	}
	cmd := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	out, errb := Limited{Max: MaxRunOutput}, Limited{Max: MaxRunOutput}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req.Stdin), &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the output open does not hold the reply
	err := cmd.Run()
	reply.Stdout, reply.Stderr = out.Bytes(), errb.Bytes()
	var ee *exec.ExitError
	switch {
	case err == nil:
		reply.Code = 0
	case errors.Is(err, exec.ErrWaitDelay): // ended; something it left holds its output
		reply.Code = cmd.ProcessState.ExitCode()
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			reply.Code = -1
		} else {
			reply.Code = ee.ExitCode()
		}
	case cmd.Process == nil: // not started: as a shell says it
		reply.Code = 127
		reply.Stderr = append(reply.Stderr, fmt.Sprintf("%s: %v\n", req.Argv[0], err)...)
	default:
		reply.Error = err.Error()
	}
	return reply
}

// Limited is a buffer that keeps at most Max bytes of what is written to
// it and drops the rest (a command's output, however much it prints).
type Limited struct {
	bytes.Buffer
	Max int
}

func (b *Limited) Write(p []byte) (int, error) {
	if room := b.Max - b.Len(); room < len(p) {
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
