package host

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The runner answers framed requests, several at once: a slow command
// does not hold a quick one, a cancel kills what a command started, a
// command that cannot start says so as a shell would, and the end of its
// input ends it and what still runs.
func TestRunner(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Runner("v1", inR, outW); outW.Close() }()
	var hello Hello
	if err := ReadFrame(outR, &hello); err != nil || hello.Version != "v1" {
		t.Fatalf("hello %+v %v", hello, err)
	}
	send := func(r Request) {
		t.Helper()
		if err := WriteFrame(inW, r); err != nil {
			t.Fatal(err)
		}
	}
	send(Request{ID: 1, Argv: []string{"sleep", "30"}})
	send(Request{ID: 2, Argv: []string{"sh", "-c", "cat; echo err >&2; exit 3"}, Stdin: []byte("in\x00put")})
	send(Request{ID: 3, Argv: []string{"/nonexistent/cmd"}})
	send(Request{ID: 4, Argv: []string{"sh", "-c", "sleep 30 & wait"}})
	replies := map[uint64]Reply{}
	read := func() Reply {
		t.Helper()
		var r Reply
		if err := ReadFrame(outR, &r); err != nil {
			t.Fatal(err)
		}
		replies[r.ID] = r
		return r
	}
	for len(replies) < 2 {
		read()
	}
	if r := replies[2]; r.Code != 3 || string(r.Stdout) != "in\x00put" || string(r.Stderr) != "err\n" {
		t.Errorf("cat: %+v", r)
	}
	if r := replies[3]; r.Code != 127 || !strings.Contains(string(r.Stderr), "/nonexistent/cmd") {
		t.Errorf("a command that cannot start: %+v", r)
	}
	t0 := time.Now()
	send(Request{ID: 4, Cancel: true})
	if r := read(); r.ID != 4 || r.Code != -1 || time.Since(t0) > 3*time.Second {
		t.Errorf("cancelled (its background sleep too, else the reply waits for it): %+v after %v", r, time.Since(t0))
	}
	go io.Copy(io.Discard, outR)
	inW.Close() // the controller went: sleep 30 is killed, the runner returns
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runner: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the runner did not end with its input")
	}
}

func TestLimited(t *testing.T) {
	l := Limited{Max: 5}
	l.Write([]byte("abc"))
	if n, _ := l.Write([]byte("defgh")); n != 5 || l.String() != "abcde" {
		t.Errorf("limited: %d %q", n, l.Bytes())
	}
}
