package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFileFaults: a node's files damaged on its emulated volume, and what
// InnoDB and Galera then say. A bit flipped at rest in a table's root page
// is met by InnoDB's page checksum when the restarted server reads the
// page ("Page read from tablespace is corrupted"); a write set touching
// the table cannot be applied there, and the cluster votes the node out
// (Inconsistent, status says for what); heal gives the true bit back and has the voted-out node
// join again, the write applied. A torn write is armed, then spent by the
// page's next write, and heal says it stays. A truncated table definition
// makes the server refuse the table until heal gives its bytes back. Bad
// input is refused with every problem named, exit 2.
func TestFileFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("itfil", `name: itfil
clusters:
  - name: db
    nodes: 3
    failure_detection: fast
    storage:
      volumes:
        - {name: data, disk: local}
client:
  name: client
`)
	e.ok("up", "-f", spec)
	if r := e.run("fault", "file", "db1", "../x", "--flip", "--torn", "--bit", "9", "--name", "itfil"); r.code != 2 ||
		!strings.Contains(r.stderr, "not --flip and --torn") || !strings.Contains(r.stderr, "--bit: expected a bit of a byte, 0 to 7, got 9") ||
		!strings.Contains(r.stderr, `FILE: expected a path in the server's data directory`) {
		t.Errorf("bad file fault: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("fault", "file", "db1", "app/none.ibd", "--flip", "--name", "itfil"); r.code != 2 || !strings.Contains(r.stderr, "FILE: db1 has no file app/none.ibd") {
		t.Errorf("a file that is not there: exit %d\n%s", r.code, r.stderr)
	}
	// 100 rows in the table's root page, written to db1's disk
	e.sql("itfil", "db1", "CREATE TABLE app.f (id INT PRIMARY KEY, v VARCHAR(100)); INSERT INTO app.f SELECT seq, 'a' FROM seq.seq_1_to_100; FLUSH TABLES app.f FOR EXPORT; UNLOCK TABLES")

	type nodeView struct {
		Name, State string
		VotedOut    string            `json:"voted_out"`
		DiskFaults  map[string]string `json:"disk_faults"`
	}
	node := func(name string) nodeView {
		var st struct{ Nodes []nodeView }
		e.statusInto("itfil", &st)
		for _, n := range st.Nodes {
			if n.Name == name {
				return n
			}
		}
		return nodeView{}
	}
	errorLog := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(e.home, "labs", "itfil", "nodes", name, "error.log"))
		return string(b)
	}

	// a flipped bit: InnoDB's checksum sees it when the page is read from disk
	r := e.ok("fault", "file", "db1", "app/f.ibd", "--flip", "--name", "itfil")
	if !strings.Contains(r.stderr, "bit 0 of byte 49302 of app/f.ibd flipped") {
		t.Errorf("flip said:\n%s", r.stderr)
	}
	if f := node("db1").DiskFaults["data"]; !strings.Contains(f, "bit flipped in app/f.ibd byte 49302 bit 0 (page 3)") {
		t.Errorf("status shows db1's file fault as %q", f)
	}
	e.ok("restart", "db1", "--name", "itfil")
	if r := e.run("sql", "db1", "--name", "itfil", "-e", "SELECT COUNT(*) FROM app.f"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "is corrupted") {
		t.Errorf("reading the damaged table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := errorLog("db1"); !strings.Contains(l, "Failed to read page 3 from file './app/f.ibd': Page read from tablespace is corrupted") {
		t.Errorf("db1's log does not report the page's checksum failure")
	}
	// a write set that cannot be applied there: the cluster votes db1 out
	e.sql("itfil", "db2", "UPDATE app.f SET v = 'b' WHERE id = 5")
	var n1 nodeView
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if n1 = node("db1"); n1.State == "Inconsistent" {
			break
		}
	}
	if n1.State != "Inconsistent" || !strings.Contains(errorLog("db1"), "Inconsistent by consensus") || !strings.Contains(n1.VotedOut, "is corrupted") {
		t.Errorf("db1 after a write set it could not apply: %s, voted out for %q", n1.State, n1.VotedOut)
	}
	r = e.ok("fault", "heal", "--name", "itfil")
	if !strings.Contains(r.stderr, "db1: its cluster voted it out") {
		t.Errorf("heal did not say it had db1 join again:\n%s", r.stderr)
	}
	if n1 = node("db1"); n1.State != "Synced" || len(n1.DiskFaults) != 0 {
		t.Errorf("db1 after heal: %+v", n1)
	}
	if got := e.sql("itfil", "db1", "SELECT v FROM app.f WHERE id = 5"); !strings.HasSuffix(got, "\nb") {
		t.Errorf("db1 after heal reads %q, want the write it could not apply", got)
	}

	// a torn write: armed, spent by the page's next write, and it stays
	e.ok("fault", "file", "db2", "app/f.ibd", "--torn", "--name", "itfil")
	if f := node("db2").DiskFaults["data"]; !strings.Contains(f, "next write of app/f.ibd page 3 (bytes 49152+16384) armed to be torn") {
		t.Errorf("status shows db2's armed write as %q", f)
	}
	e.sql("itfil", "db2", "UPDATE app.f SET v = 'c' WHERE id = 6; FLUSH TABLES app.f FOR EXPORT; UNLOCK TABLES")
	if f := node("db2").DiskFaults["data"]; !strings.Contains(f, "write of app/f.ibd page 3 (bytes 49152+16384) torn at") {
		t.Errorf("status shows db2's torn write as %q", f)
	}
	if r := e.ok("fault", "heal", "--name", "itfil"); !strings.Contains(r.stderr, "db2: the write of app/f.ibd page 3 (bytes 49152+16384) dropped at") {
		t.Errorf("heal did not say the torn write stays:\n%s", r.stderr)
	}

	// a table definition cut short: refused until heal gives its bytes back
	e.ok("fault", "file", "db3", "app/f.frm", "--truncate", "100", "--name", "itfil")
	if r := e.run("sql", "db3", "--name", "itfil", "-e", "FLUSH LOCAL TABLES app.f; SELECT COUNT(*) FROM app.f"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "Incorrect information in file: './app/f.frm'") {
		t.Errorf("a truncated .frm: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.ok("fault", "heal", "--name", "itfil"); !strings.Contains(r.stderr, "db3: app/f.frm has its") {
		t.Errorf("heal did not give the cut bytes back:\n%s", r.stderr)
	}
	if got := e.sql("itfil", "db3", "SELECT COUNT(*) FROM app.f"); !strings.HasSuffix(got, "\n100") {
		t.Errorf("db3 after heal: %q", got)
	}
	e.ok("down", "--name", "itfil")
	e.assertNoLeftovers()
}
