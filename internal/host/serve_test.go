package host

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

func serve(t *testing.T, root, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Serve(root, "v1", args, strings.NewReader(stdin), &out)
	return out.String(), err
}

func TestWithin(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "labs", "x"), 0o755)
	os.Symlink("/etc", filepath.Join(root, "labs", "out"))
	os.Symlink(filepath.Join(root, "labs", "x"), filepath.Join(root, "labs", "in"))
	for p, ok := range map[string]bool{
		root + "/labs/x/my.cnf":          true,
		root + "/labs/new/deep/file":     true,
		root + "/labs/in/file":           true,
		root:                             false,
		root + "/../etc/passwd":          false,
		root + "/labs/../../etc":         false,
		"/etc/passwd":                    false,
		"labs/x":                         false,
		root + "/labs/out/passwd":        false,
		root + "/labs/out/new/file":      false,
		root + "x/sibling":               false,
		filepath.Dir(root) + "/neighbor": false,
	} {
		if err := Within(root, p); (err == nil) != ok {
			t.Errorf("Within(%s): %v, want allowed %v", p, err, ok)
		}
	}
}

func TestServeFiles(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "labs", "a", "secrets", "app.password")
	if _, err := serve(t, root, "s3cret\n", "write", p, "0600"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("written: %v %v", st.Mode(), err)
	}
	if out, err := serve(t, root, "", "read", p); err != nil || out != "s3cret\n" {
		t.Errorf("read: %q %v", out, err)
	}
	if _, err := serve(t, root, "", "rm", filepath.Join(root, "labs", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("rm left %s", p)
	}
	if _, err := serve(t, root, "", "read", p); !os.IsNotExist(err) {
		t.Errorf("read of a missing file: %v", err)
	}
	for _, args := range [][]string{
		{"write", "/etc/hadrill-test", "0644"},
		{"write", p, "rw"},
		{"write", p},
		{"rm", root},
		{"read", "/etc/passwd"},
		{"nonsense"},
		{},
		{"daemon", "start"},
	} {
		if _, err := serve(t, root, "{}", args...); !hderr.IsUser(err) {
			t.Errorf("%v: %v, want bad input", args, err)
		}
	}
	if err := Serve("/", "v1", []string{"version"}, nil, &bytes.Buffer{}); !hderr.IsUser(err) {
		t.Errorf("root /: %v", err)
	}
	if out, _ := serve(t, root, "", "version"); out != "v1\n" {
		t.Errorf("version: %q", out)
	}
}

func TestServeDaemon(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "labs", "a", "d")
	marker := filepath.Join(dir, "marker")
	d := Daemon{Name: "test sleeper", Argv: []string{"sh", "-c", "sleep 60; :", marker}, Dir: dir, LogFile: filepath.Join(dir, "log"),
		PidFile: filepath.Join(dir, "pid"), Marker: marker}
	js, _ := json.Marshal(d)
	reply := func(args ...string) DaemonReply {
		t.Helper()
		out, err := serve(t, root, string(js), args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var r DaemonReply
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %q", args, out)
		}
		return r
	}
	first := reply("daemon", "ensure")
	if first.Pid == 0 || !first.Started {
		t.Fatalf("ensure: %+v", first)
	}
	t.Cleanup(func() { serve(t, root, string(js), "daemon", "kill") })
	if again := reply("daemon", "ensure"); again.Pid != first.Pid || again.Started {
		t.Errorf("ensure of a running daemon: %+v", again)
	}
	if r := reply("daemon", "pid"); r.Pid != first.Pid {
		t.Errorf("pid: %+v", r)
	}
	reply("daemon", "stop", "2s")
	if r := reply("daemon", "pid"); r.Pid != 0 {
		t.Errorf("pid after stop: %+v", r)
	}
	second := reply("daemon", "ensure")
	reply("daemon", "kill")
	deadline := time.Now().Add(5 * time.Second)
	for reply("daemon", "pid").Pid != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if r := reply("daemon", "pid"); r.Pid != 0 || second.Pid == 0 {
		t.Errorf("pid after kill: %+v (started %d)", r, second.Pid)
	}
	outside := d
	outside.LogFile = "/tmp/hadrill-outside.log"
	b, _ := json.Marshal(outside)
	if _, err := serve(t, root, string(b), "daemon", "ensure"); !hderr.IsUser(err) || !strings.Contains(err.Error(), "outside hadrill's directory") {
		t.Errorf("a log outside the root: %v", err)
	}
}
