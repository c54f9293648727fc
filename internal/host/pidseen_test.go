package host

import (
	"context"
	"os"
	"testing"
)

// filesHost reads files from a map; nothing else.
type filesHost struct {
	Host
	files map[string]string
}

func (h filesHost) ReadFile(_ context.Context, path string) ([]byte, error) {
	s, ok := h.files[path]
	if !ok {
		return nil, os.ErrNotExist
	}
	return []byte(s), nil
}

// What a daemon judged gone at start-up left, said in its error.
func TestPidSeen(t *testing.T) {
	d := Daemon{Name: "db1 exporter"}
	d.PidFile, d.Marker = "/l/x.pid", "/l/x.cnf"
	for _, c := range []struct {
		files map[string]string
		want  string
	}{
		{nil, "no pid file"},
		{map[string]string{"/l/x.pid": ""}, `its pid file holds ""`},
		{map[string]string{"/l/x.pid": "42\n"}, "pid 42"},
		{map[string]string{"/l/x.pid": "42\n", "/proc/42/cmdline": ""}, "pid 42, gone or a zombie"},
		{map[string]string{"/l/x.pid": "42\n", "/proc/42/cmdline": "ip\x00netns\x00exec\x00hd\x00x\x00--config=/l/x.cnf\x00"},
			`pid 42, now running "ip netns exec hd x --config=/l/x.cnf", which lacks the marker "/l/x.cnf" or is exiting`},
	} {
		if got := pidSeen(context.Background(), filesHost{files: c.files}, d); got != c.want {
			t.Errorf("%v: %q, want %q", c.files, got, c.want)
		}
	}
}
