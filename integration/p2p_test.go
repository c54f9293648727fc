package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type conflictOut struct {
	Acked     int    `json:"acked"`
	Diverged  int    `json:"diverged_rows"`
	Lost      int    `json:"lost_writes"`
	ChecksumA string `json:"checksum_a"`
	ChecksumB string `json:"checksum_b"`
}

// TestPeerToPeer: the p2p preset is a ring of two writable primaries in
// two regions. Both take writes, with auto-increment keys of their own;
// each applies the other's (heartbeat lag known both ways); a server that
// was down catches up. Both incrementing their own rows lose nothing; the
// same rows, and increments are lost (the conflict test can say no).
func TestPeerToPeer(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	e.ok("up", "--name", "itp2p", "--preset", "p2p")
	e.ok("sql", "east1", "--name", "itp2p", "-e", "CREATE TABLE app.p (id INT AUTO_INCREMENT PRIMARY KEY, at VARCHAR(8)) ENGINE=InnoDB")
	e.waitRow("itp2p", "west1", "SELECT COUNT(*) FROM information_schema.tables WHERE table_name='p'", "1", 5*time.Second)
	for i := 0; i < 3; i++ {
		e.ok("sql", "east1", "--name", "itp2p", "-e", "INSERT INTO app.p (at) VALUES ('east')")
		e.ok("sql", "west1", "--name", "itp2p", "-e", "INSERT INTO app.p (at) VALUES ('west')")
	}
	want := "1:east,2:west,3:east,4:west,5:east,6:west" // east's keys odd, west's even
	for _, n := range []string{"east1", "west1"} {
		e.waitRow("itp2p", n, "SELECT GROUP_CONCAT(CONCAT(id, ':', at) ORDER BY id) FROM app.p", want, 5*time.Second)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, ok := e.repl("itp2p"), 0
		for _, n := range st.Nodes {
			if len(n.Replication) == 1 && n.Replication[0].IO == "Yes" && n.Replication[0].SQL == "Yes" && n.Replication[0].Lag != nil {
				ok++
			}
		}
		if ok == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("each primary should apply the other's writes with a known lag: %+v", st.Nodes)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// west down: east takes writes alone; west catches up once back
	e.ok("stop", "west1", "--name", "itp2p")
	e.ok("sql", "east1", "--name", "itp2p", "-e", "INSERT INTO app.p (at) VALUES ('alone')")
	e.ok("start", "west1", "--name", "itp2p")
	e.waitRow("itp2p", "west1", "SELECT COUNT(*) FROM app.p WHERE at = 'alone'", "1", 10*time.Second)
	e.ok("sql", "west1", "--name", "itp2p", "-e", "INSERT INTO app.p (at) VALUES ('back')")
	e.waitRow("itp2p", "east1", "SELECT COUNT(*) FROM app.p WHERE at = 'back'", "1", 10*time.Second)

	conflict := func(args ...string) conflictOut {
		t.Helper()
		var out []conflictOut
		r := e.ok(append([]string{"bench", "conflict", "--name", "itp2p", "-o", "json"}, args...)...)
		var wrapped struct {
			Results []conflictOut `json:"results"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &wrapped); err != nil || len(wrapped.Results) != 1 {
			t.Fatalf("bench conflict %v: %v\n%s", args, err, r.stdout)
		}
		out = wrapped.Results
		return out[0]
	}
	own := conflict("--keys", "own", "--writes", "300")
	if own.Acked != 600 || own.Lost != 0 || own.Diverged != 0 || own.ChecksumA == "" || own.ChecksumA != own.ChecksumB {
		t.Errorf("each its own rows: %+v, want 600 acknowledged, none lost or diverged, equal checksums", own)
	}
	shared := conflict("--keys", "shared", "--writes", "1000")
	if shared.Acked != 2000 || shared.Lost == 0 {
		t.Errorf("the same rows on both: %+v, want increments lost", shared)
	}
	if (shared.Diverged == 0) != (shared.ChecksumA == shared.ChecksumB) {
		t.Errorf("checksums %s and %s disagree with %d diverged rows", shared.ChecksumA, shared.ChecksumB, shared.Diverged)
	}
	t.Logf("both primaries writing the same 10 rows: %d of %d increments lost, %d rows diverged", shared.Lost, shared.Acked, shared.Diverged)
	for _, bad := range [][]string{{"--keys", "mine"}, {"--rows", "0"}, {"--a", "east1", "--b", "east1"}} {
		if r := e.run(append([]string{"bench", "conflict", "--name", "itp2p"}, bad...)...); r.code != 2 || !strings.Contains(r.stderr, bad[0]) {
			t.Errorf("bench conflict %v: exit %d, want 2 naming %s\n%s", bad, r.code, bad[0], r.stderr)
		}
	}
	e.ok("down", "--name", "itp2p")
}
