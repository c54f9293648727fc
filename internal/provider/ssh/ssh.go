// Package ssh reaches a lab's remote hosts: one SSH connection per host
// (through its jump host, if it has one), its host key verified against a
// known_hosts file or a pinned fingerprint and never trusted silently,
// login with a key file or the SSH agent. Over the connection it runs
// commands (through `sudo -n` for a login that is not root) and dials TCP
// addresses and unix sockets from the host.
package ssh

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/inventory"
)

// Stage is how far a connection got before it failed.
type Stage string

// Stages of a connection.
const (
	StageReach   Stage = "reach"    // no TCP connection (or none through the jump host)
	StageHostKey Stage = "host key" // the host's key is unknown or not the expected one
	StageLogin   Stage = "login"    // the host refused every credential
	StageConfig  Stage = "config"   // a key file could not be used
)

// ConnectError says why a host could not be reached, at which stage.
type ConnectError struct {
	Host  string // the inventory's name of the host
	Stage Stage
	Msg   string
}

func (e *ConnectError) Error() string { return e.Msg }

// DialTCP opens the TCP connection to a host (or its jump host): from this
// computer's network, or, for a test, from a network namespace of it.
var DialTCP = defaultDial

func defaultDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// Client is one connection to a host.
type Client struct {
	Host inventory.Host
	c    *xssh.Client
	jump *xssh.Client
}

// Connect opens a connection to h (through its jump host), within timeout.
func Connect(ctx context.Context, h inventory.Host, timeout time.Duration) (*Client, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var jump *xssh.Client
	dial := DialTCP
	if h.Jump != nil {
		j, err := Connect(ctx, *h.Jump, timeout)
		if err != nil {
			var ce *ConnectError
			if errors.As(err, &ce) {
				ce.Msg = fmt.Sprintf("jump host %s: %s", h.Jump.Name, ce.Msg)
				ce.Host = h.Name
			}
			return nil, err
		}
		jump = j.c
		dial = func(ctx context.Context, addr string) (net.Conn, error) { return jump.DialContext(ctx, "tcp", addr) }
	}
	c, err := connect(ctx, h, dial)
	if err != nil {
		if jump != nil {
			jump.Close()
		}
		return nil, err
	}
	return &Client{Host: h, c: c, jump: jump}, nil
}

func connect(ctx context.Context, h inventory.Host, dial func(context.Context, string) (net.Conn, error)) (*xssh.Client, error) {
	fail := func(stage Stage, format string, a ...any) error {
		return &ConnectError{Host: h.Name, Stage: stage, Msg: fmt.Sprintf(format, a...)}
	}
	auth, closeAgent, err := authMethods(h)
	if err != nil {
		return nil, fail(StageConfig, "%v", err)
	}
	defer closeAgent()
	check, algorithms, err := hostKeyCheck(h)
	if err != nil {
		return nil, fail(StageConfig, "%v", err)
	}
	cfg := &xssh.ClientConfig{User: h.User, Auth: auth, HostKeyCallback: check.callback, HostKeyAlgorithms: algorithms}
	conn, err := dial(ctx, h.Endpoint())
	if err != nil {
		return nil, fail(StageReach, "cannot reach %s: %v", h.Endpoint(), reason(err))
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	cc, chans, reqs, err := xssh.NewClientConn(conn, h.Endpoint(), cfg)
	stop()
	if err != nil {
		conn.Close()
		switch {
		case check.err != nil:
			return nil, fail(StageHostKey, "%s: %v", h.Endpoint(), check.err)
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fail(StageLogin, "%s refused the login as %s (%s)", h.Endpoint(), h.User, credentials(h))
		case ctx.Err() != nil:
			return nil, fail(StageReach, "%s: no SSH answer in time (%v)", h.Endpoint(), reason(err))
		}
		return nil, fail(StageReach, "%s: %v", h.Endpoint(), reason(err))
	}
	_ = conn.SetDeadline(time.Time{})
	return xssh.NewClient(cc, chans, reqs), nil
}

// reason strips Go's wrapping from a network error ("dial tcp …: connect:
// connection refused" → "connection refused").
func reason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && !strings.HasPrefix(s[i+2:], "EOF") {
		return s[i+2:]
	}
	return strings.TrimPrefix(s, "ssh: ")
}

func credentials(h inventory.Host) string {
	if h.Identity != "" {
		return "key " + h.Identity
	}
	return "the SSH agent's keys"
}

// authMethods are the host's credentials: its key file, else the agent.
func authMethods(h inventory.Host) ([]xssh.AuthMethod, func(), error) {
	if h.Identity != "" {
		b, err := os.ReadFile(h.Identity)
		if err != nil {
			return nil, nil, fmt.Errorf("identity: %v", err)
		}
		signer, err := xssh.ParsePrivateKey(b)
		var pass *xssh.PassphraseMissingError
		if errors.As(err, &pass) {
			return nil, nil, fmt.Errorf("identity: %s is protected by a passphrase: load it into an SSH agent (ssh-add) and leave identity out", h.Identity)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("identity: %s: %v", h.Identity, err)
		}
		return []xssh.AuthMethod{xssh.PublicKeys(signer)}, func() {}, nil
	}
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, nil, errors.New("identity: no key file given and no SSH agent running (SSH_AUTH_SOCK is not set)")
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("the SSH agent at %s: %v", sock, err)
	}
	return []xssh.AuthMethod{xssh.PublicKeysCallback(agent.NewClient(conn).Signers)}, func() { conn.Close() }, nil
}

// keyCheck verifies a host key and remembers why it refused one.
type keyCheck struct {
	callback xssh.HostKeyCallback
	err      error
}

// hostKeyCheck verifies the host's key against its pinned fingerprint or
// its known_hosts file, and lists the key algorithms to ask the host for
// (those known_hosts holds for it: else the host may offer another of its
// keys, which would look like a changed key).
func hostKeyCheck(h inventory.Host) (*keyCheck, []string, error) {
	kc := &keyCheck{}
	if h.Fingerprint != "" {
		kc.callback = func(_ string, _ net.Addr, key xssh.PublicKey) error {
			if got := xssh.FingerprintSHA256(key); got != h.Fingerprint {
				kc.err = fmt.Errorf("the host key is %s (%s), not %s as the inventory pins it: refusing (the host was reinstalled, or something is in between)", got, key.Type(), h.Fingerprint)
				return kc.err
			}
			return nil
		}
		return kc, nil, nil
	}
	db, err := knownhosts.New(h.KnownHosts)
	if err != nil {
		return nil, nil, fmt.Errorf("known_hosts: %v", err)
	}
	kc.callback = func(hostname string, remote net.Addr, key xssh.PublicKey) error {
		err := db(hostname, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case errors.As(err, &ke) && len(ke.Want) == 0:
			kc.err = fmt.Errorf("its host key %s (%s) is not in %s: check it out of band (ssh-keygen -lf on the host) and add it, or pin its fingerprint; host keys are never trusted silently",
				xssh.FingerprintSHA256(key), key.Type(), h.KnownHosts)
		case errors.As(err, &ke):
			var want []string
			for _, k := range ke.Want {
				want = append(want, fmt.Sprintf("%s (%s:%d)", xssh.FingerprintSHA256(k.Key), k.Filename, k.Line))
			}
			kc.err = fmt.Errorf("its host key %s (%s) is not the one known for it: %s; refusing (the host was reinstalled, or something is in between)",
				xssh.FingerprintSHA256(key), key.Type(), strings.Join(want, ", "))
		case errors.As(err, &re):
			kc.err = fmt.Errorf("its host key %s is revoked in %s:%d", xssh.FingerprintSHA256(key), re.Revoked.Filename, re.Revoked.Line)
		case err != nil:
			kc.err = err
		}
		return kc.err
	}
	return kc, knownAlgorithms(db, h), nil
}

// knownAlgorithms asks the known_hosts database which keys it holds for h
// by offering it a key it cannot hold.
func knownAlgorithms(db xssh.HostKeyCallback, h inventory.Host) []string {
	_, priv, _ := ed25519.GenerateKey(nil)
	probe, err := xssh.NewSignerFromKey(priv)
	if err != nil {
		return nil
	}
	addr := &net.TCPAddr{IP: net.ParseIP(h.Address), Port: h.Port}
	var ke *knownhosts.KeyError
	if !errors.As(db(h.Endpoint(), addr, probe.PublicKey()), &ke) {
		return nil
	}
	var algos []string
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case xssh.KeyAlgoRSA:
			algos = append(algos, xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256, t)
		default:
			algos = append(algos, t)
		}
	}
	return algos
}

// Close ends the connection (and the jump host's).
func (c *Client) Close() error {
	err := c.c.Close()
	if c.jump != nil {
		c.jump.Close()
	}
	return err
}

// Result is what a command printed and how it ended.
type Result struct {
	Stdout, Stderr []byte
	Code           int // exit status; -1 when it ended without one (a signal)
}

// Reason is the last line the command wrote to stderr (where a failing
// command says why).
func (r Result) Reason() string { return r.Said(1) }

// Said is what the command wrote to stderr, its last lines (at most n,
// blank ones left out): a server that fails says why a few lines before
// its last ("[ERROR] Aborting").
func (r Result) Said(n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(r.Stderr)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// maxOutput bounds what one command's output may hold in memory.
const maxOutput = 64 << 20

// Run runs argv on the host (as root through `sudo -n` when the login is
// not root), stdin given to it, and waits for it. err is set only when the
// command could not be run or ctx ended it; a non-zero exit is Result.Code.
func (c *Client) Run(ctx context.Context, argv []string, stdin io.Reader) (Result, error) {
	out, errb := host.Limited{Max: maxOutput}, host.Limited{Max: maxOutput}
	code, err := c.Attach(ctx, argv, stdin, &out, &errb)
	return Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Code: code}, err
}

// Attach runs argv on the host as Run does, its output written to stdout
// and stderr as it comes, and returns its exit status (-1 when it ended
// without one). ctx ending kills it.
func (c *Client) Attach(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s, err := c.c.NewSession()
	if err != nil {
		return -1, fmt.Errorf("%s: %v", c.Host.Name, err)
	}
	defer s.Close()
	s.Stdin, s.Stdout, s.Stderr = stdin, stdout, stderr
	done := make(chan error, 1)
	go func() { done <- s.Run(Command(c.Host, argv)) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Signal(xssh.SIGKILL)
		s.Close()
		<-done
		return -1, ctx.Err()
	}
	var ee *xssh.ExitError
	var missing *xssh.ExitMissingError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ee.Signal() != "" {
			return -1, nil
		}
		return ee.ExitStatus(), nil
	case errors.As(err, &missing):
		return -1, nil
	}
	return -1, fmt.Errorf("%s: %v", c.Host.Name, err)
}

// Stream is a command running on the host whose input and output are
// read and written as it runs.
type Stream struct {
	Stdin  io.WriteCloser
	Stdout *bufio.Reader
	s      *xssh.Session
	stop   func() bool
}

// Stream starts argv on the host (as Run does) with its standard input
// and output connected; ctx ending kills it. Close ends it.
func (c *Client) Stream(ctx context.Context, argv []string) (*Stream, error) {
	s, err := c.c.NewSession()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Host.Name, err)
	}
	in, err := s.StdinPipe()
	if err != nil {
		s.Close()
		return nil, err
	}
	out, err := s.StdoutPipe()
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Start(Command(c.Host, argv)); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %v", c.Host.Name, err)
	}
	st := &Stream{Stdin: in, Stdout: bufio.NewReader(out), s: s}
	st.stop = context.AfterFunc(ctx, func() { st.kill() })
	return st, nil
}

func (st *Stream) kill() {
	_ = st.s.Signal(xssh.SIGKILL)
	st.s.Close()
}

// Close ends the command: its input closed, then the session.
func (st *Stream) Close() error {
	st.stop()
	st.Stdin.Close()
	st.kill()
	return nil
}

// Dial connects from the host to addr ("tcp" host:port, or "unix" and a
// socket path).
func (c *Client) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ch, err := c.c.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return withDeadlines(ch), nil
}

// withDeadlines gives a forwarded channel what an SSH channel lacks and
// database drivers need: read and write deadlines. The caller gets one end
// of an in-memory pipe (which has them); two copiers join the other end to
// the channel, and closing either side closes both.
func withDeadlines(ch net.Conn) net.Conn {
	mine, theirs := net.Pipe()
	go func() {
		_, _ = io.Copy(ch, theirs)
		ch.Close()
	}()
	go func() {
		_, _ = io.Copy(theirs, ch)
		theirs.Close()
	}()
	return &piped{Conn: mine, ch: ch}
}

// piped is the caller's end, reporting the channel's addresses.
type piped struct {
	net.Conn
	ch net.Conn
}

func (p *piped) LocalAddr() net.Addr  { return p.ch.LocalAddr() }
func (p *piped) RemoteAddr() net.Addr { return p.ch.RemoteAddr() }

// Command is the command line the host's shell runs for argv: every
// argument quoted, behind `sudo -n --` for a host that needs it.
func Command(h inventory.Host, argv []string) string {
	if h.Sudo {
		argv = append([]string{"sudo", "-n", "--"}, argv...)
	}
	return Quote(argv)
}

var plain = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// Quote joins argv into one POSIX shell command line that gives the
// remote shell exactly these arguments.
func Quote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if plain.MatchString(a) {
			parts[i] = a
		} else {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
