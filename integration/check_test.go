package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheck: a history checked from a file: a stale read is valid for
// serializable and not for strict serializable (exit 5, named first, with
// its example); a malformed history is refused naming each bad line.
func TestCheck(t *testing.T) {
	e := newEnv(t)
	h := e.writeSpec("stale.jsonl", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "node": "db1", "value": [["append", 1, 1]]}
{"index": 1, "time": 2, "process": 0, "type": "ok", "f": "txn", "node": "db1", "value": [["append", 1, 1]]}
{"index": 2, "time": 3, "process": 1, "type": "invoke", "f": "txn", "node": "db2", "value": [["r", 1, null]]}
{"index": 3, "time": 4, "process": 1, "type": "ok", "f": "txn", "node": "db2", "value": [["r", 1, []]]}
{"index": 4, "time": 5, "process": 2, "type": "invoke", "f": "txn", "node": "db3", "value": [["r", 1, null]]}
{"index": 5, "time": 6, "process": 2, "type": "ok", "f": "txn", "node": "db3", "value": [["r", 1, [1]]]}
`)
	r := e.run("check", h)
	if r.code != 5 || !strings.HasPrefix(strings.SplitN(r.stdout, "\n", 2)[1], "not strict-serializable: G-single-realtime") ||
		!strings.Contains(r.stdout, "T0 completed before T1 began (realtime)") {
		t.Errorf("a stale read under strict serializability: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		Valid     bool `json:"valid"`
		Anomalies []struct {
			Type      string `json:"type"`
			Forbidden bool   `json:"forbidden"`
		} `json:"anomalies"`
	}
	r = e.run("check", h, "--model", "serializable", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || !res.Valid || len(res.Anomalies) != 1 || res.Anomalies[0].Forbidden {
		t.Errorf("the same under serializability: exit %d %v %+v", r.code, err, res)
	}
	bad := e.writeSpec("bad.jsonl", `{"index": 0, "time": 1, "process": 0, "type": "begin", "f": "txn", "value": []}
{oops
`)
	if r := e.run("check", bad, "--model", "acid"); r.code != 2 || !strings.Contains(r.stderr, "--model: expected one of") {
		t.Errorf("bad model: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("check", bad); r.code != 2 || !strings.Contains(r.stderr, "line 1: type: expected invoke, ok, fail or info") || !strings.Contains(r.stderr, "line 2:") {
		t.Errorf("bad history: exit %d %s", r.code, r.stderr)
	}
}
