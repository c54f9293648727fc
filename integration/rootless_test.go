package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const rootlessUser = "hdrootless"

// TestRootlessAsNonRootUser: a plain user brings galera3 up on 127.x
// addresses (no namespaces), all Synced, and down removes it.
func TestRootlessAsNonRootUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := ensureUser(t)
	// The user needs its own home and binary it can reach.
	home := filepath.Join(e.home, "rl")
	os.MkdirAll(home, 0o755)
	binCopy := filepath.Join(e.home, "hadrill")
	data, _ := os.ReadFile(bin)
	os.WriteFile(binCopy, data, 0o755)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	os.Chmod(e.home, 0o755)
	filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
	as := func(args ...string) (string, int) {
		c := exec.Command("runuser", append([]string{"-u", rootlessUser, "--", binCopy, "--home", home}, args...)...)
		c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home}
		out, err := c.CombinedOutput()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		}
		return string(out), code
	}
	t.Cleanup(func() { as("down", "--all") })
	if out, code := as("up", "--name", "itrl"); code != 0 {
		t.Fatalf("rootless up: exit %d\n%s", code, out)
	}
	out, _ := as("status", "--name", "itrl", "-o", "json")
	var st status
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, n := range st.Nodes {
		if n.State != "Synced" || !strings.HasPrefix(n.Address, "127.") || n.Netns != "" {
			t.Errorf("rootless node %+v", n)
		}
	}
	if out, code := as("sql", "db2", "--name", "itrl", "-e", "SELECT CURRENT_USER()"); code != 0 || !strings.Contains(out, rootlessUser+"@localhost") {
		t.Errorf("rootless sql: exit %d %s", code, out)
	}
	if out, code := as("down", "--name", "itrl"); code != 0 {
		t.Errorf("rootless down: exit %d %s", code, out)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "labs")); len(entries) != 0 {
		t.Errorf("rootless down left %v", entries)
	}
}

// ensureUser creates the unprivileged test account once for the package
// if it does not exist (TestMain removes it after every test, those that
// run at once included).
func ensureUser(t *testing.T) *user.User {
	t.Helper()
	testUser.once.Do(func() {
		if u, err := user.Lookup(rootlessUser); err == nil {
			testUser.u = u
			return
		}
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", rootlessUser).CombinedOutput(); err != nil {
			testUser.why = fmt.Sprintf("cannot create a test user: %v %s", err, out)
			return
		}
		testUser.created = true
		u, err := user.Lookup(rootlessUser)
		if err != nil {
			testUser.why = err.Error()
		}
		testUser.u = u
	})
	if testUser.u == nil {
		t.Skip(testUser.why)
	}
	return testUser.u
}

var testUser struct {
	once    sync.Once
	u       *user.User
	created bool
	why     string
}
