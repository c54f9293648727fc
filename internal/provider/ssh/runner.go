package ssh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	xssh "golang.org/x/crypto/ssh"

	"github.com/hadrill/hadrill/internal/host"
)

// runner is the controller's end of a host's runner (host.Runner): one
// session in which hadrill's copy runs every command it is sent, so a
// command costs one round trip and an exec instead of a session of its
// own. When it ends (the connection broke, the host killed it) commands
// go through sessions again.
type runner struct {
	name   string
	s      *xssh.Session
	stdin  io.WriteCloser
	stderr *host.Limited
	wmu    sync.Mutex // one frame at a time
	mu     sync.Mutex
	next   uint64
	wait   map[uint64]chan host.Reply
	dead   error
}

// runnerScript starts hadrill's copy $2 as the runner of directory $1,
// first copying it there when the host lacks it: it then says "copy" and
// reads the binary, $3 bytes, from its input (nothing else comes before
// the runner's hello), refusing a short copy.
const runnerScript = `set -e
if [ ! -x "$2" ]; then
	umask 077
	mkdir -p "${2%/*}"
	chmod 700 "${2%/*}"
	tmp="$2.$$"
	trap 'rm -f "$tmp"' EXIT
	echo copy
	head -c "$3" > "$tmp"
	[ "$(wc -c < "$tmp")" -eq "$3" ] || { echo "hadrill's copy arrived short" >&2; exit 1; }
	chmod 700 "$tmp"
	mv "$tmp" "$2"
	trap - EXIT
fi
exec "$2" host --root "$1" runner
`

// startRunner starts hadrill's copy bin on the host as its runner, in one
// session: copied there from exe first when the host does not have it
// (the copy is named by its content, so a copy there is this one). It
// returns the runner with the version that answered.
func startRunner(ctx context.Context, c *Client, exe, bin, dir string) (*runner, string, error) {
	f, err := os.Open(exe)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	s, err := c.c.NewSession()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", c.Host.Name, err)
	}
	r := &runner{name: c.Host.Name, s: s, stderr: &host.Limited{Max: 64 << 10}, wait: map[uint64]chan host.Reply{}}
	s.Stderr = r.stderr
	if r.stdin, err = s.StdinPipe(); err != nil {
		s.Close()
		return nil, "", err
	}
	out, err := s.StdoutPipe()
	if err != nil {
		s.Close()
		return nil, "", err
	}
	if err := s.Start(Command(c.Host, []string{"sh", "-c", runnerScript, "sh", dir, bin, strconv.FormatInt(st.Size(), 10)})); err != nil {
		s.Close()
		return nil, "", fmt.Errorf("%s: %v", c.Host.Name, err)
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	in := bufio.NewReader(out)
	fail := func(what string, err error) (*runner, string, error) {
		s.Close()
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		msg := fmt.Sprintf("%s: %s %s: %v", c.Host.Name, what, bin, err)
		if said := (Result{Stderr: r.stderr.Bytes()}).Said(3); said != "" {
			msg += ": " + said
		}
		return nil, "", errors.New(msg)
	}
	if first, err := in.Peek(1); err == nil && first[0] == 'c' { // "copy": the host lacks it
		if line, err := in.ReadString('\n'); err != nil || line != "copy\n" {
			return fail("copying hadrill to", fmt.Errorf("unexpected %q", line))
		}
		if _, err := io.Copy(r.stdin, f); err != nil {
			return fail("copying hadrill to", err)
		}
	}
	var hello host.Hello
	if err := host.ReadFrame(in, &hello); err != nil {
		return fail("starting hadrill's copy", err)
	}
	go r.read(in)
	return r, hello.Version, nil
}

// read hands each reply to its request; when the runner ends, every
// request still waiting fails and the runner is dead.
func (r *runner) read(in *bufio.Reader) {
	for {
		var rep host.Reply
		if err := host.ReadFrame(in, &rep); err != nil {
			r.mu.Lock()
			r.dead = fmt.Errorf("%s: the runner ended: %v", r.name, err)
			for id, ch := range r.wait {
				close(ch)
				delete(r.wait, id)
			}
			r.mu.Unlock()
			return
		}
		r.mu.Lock()
		ch := r.wait[rep.ID]
		delete(r.wait, rep.ID)
		r.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
}

// fits says whether a command with this standard input can go through the
// runner: none, or a small one held in memory (a stream, a backup, a copy
// of hadrill goes through a session of its own).
func fits(stdin io.Reader) ([]byte, bool) {
	switch in := stdin.(type) {
	case nil:
		return nil, true
	case *bytes.Reader:
		if in.Len() <= host.MaxRunInput {
			b := make([]byte, in.Len())
			_, _ = in.Read(b)
			return b, true
		}
	case *strings.Reader:
		if in.Len() <= host.MaxRunInput {
			b := make([]byte, in.Len())
			_, _ = in.Read(b)
			return b, true
		}
	}
	return nil, false
}

// run sends argv and waits for its reply; ok false: the runner is dead and
// nothing was sent.
func (r *runner) run(ctx context.Context, argv []string, stdin []byte) (Result, bool, error) {
	r.mu.Lock()
	if r.dead != nil {
		r.mu.Unlock()
		return Result{}, false, nil
	}
	r.next++
	id := r.next
	ch := make(chan host.Reply, 1)
	r.wait[id] = ch
	r.mu.Unlock()
	if err := r.send(host.Request{ID: id, Argv: argv, Stdin: stdin}); err != nil {
		r.mu.Lock()
		delete(r.wait, id)
		r.mu.Unlock()
		return Result{Code: -1}, true, fmt.Errorf("%s: sending to the runner: %v", r.name, err)
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			return Result{Code: -1}, true, r.deadErr()
		}
		if rep.Error != "" {
			return Result{Code: -1}, true, fmt.Errorf("%s: %s", r.name, rep.Error)
		}
		return Result{Stdout: rep.Stdout, Stderr: rep.Stderr, Code: rep.Code}, true, nil
	case <-ctx.Done():
		_ = r.send(host.Request{ID: id, Cancel: true}) // its reply is dropped
		return Result{Code: -1}, true, ctx.Err()
	}
}

func (r *runner) send(req host.Request) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	return host.WriteFrame(r.stdin, req)
}

func (r *runner) deadErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead == nil {
		return errors.New(r.name + ": the runner ended")
	}
	return r.dead
}

// close ends the runner: its input closed (it kills what still runs and
// exits), then its session.
func (r *runner) close() {
	r.stdin.Close()
	r.s.Close()
}
