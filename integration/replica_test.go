package integration

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/netns"
)

// TestPrimaryReplicaEndpoints: two standalone servers, b1 replicating from
// a1 over a channel: the agents answer /primary and /replica accordingly.
func TestPrimaryReplicaEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("pr.yaml", "clusters:\n  - name: a\n    kind: standalone\n  - name: b\n    kind: standalone\n"+
		"replication:\n  - from: a\n    to: b\n")
	e.ok("up", "--name", "itrep", "-f", spec)
	addr := map[string]string{}
	for _, n := range e.lbStatus("itrep").Nodes {
		addr[n.Name] = n.Address
	}
	get := agentClient("hd-itrep-client")
	wait := func(url string, want int) string {
		t.Helper()
		var code int
		var body string
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if code, body = get(url); code == want {
				return body
			}
		}
		t.Errorf("%s: %d %s, want %d", url, code, body, want)
		return body
	}
	a, b := "http://"+addr["a1"]+":9200", "http://"+addr["b1"]+":9200"
	wait(a+"/primary", 200)
	if body := wait(a+"/replica", 503); !strings.Contains(body, `"code":"NotReplica"`) {
		t.Errorf("a1 /replica: %s", body)
	}
	wait(b+"/replica?max_lag=5", 200)
	if body := wait(b+"/primary", 503); !strings.Contains(body, "replicates from "+addr["a1"]) {
		t.Errorf("b1 /primary: %s", body)
	}
	if code, _ := get(b + "/replica?max_lag=soon"); code != 400 {
		t.Errorf("bad max_lag: %d", code)
	}
	// draining applies to every role, not only to Galera members
	// draining the only node that takes a cluster's writes is said
	if r := e.ok("drain", "a1", "b1", "--name", "itrep"); !strings.Contains(r.stderr, "note: every node of cluster a is drained now") {
		t.Errorf("draining a cluster's last writer without a word:\n%s", r.stderr)
	}
	if body := wait(a+"/primary", 503); !strings.Contains(body, `"code":"Drained"`) {
		t.Errorf("drained a1 /primary: %s", body)
	}
	if body := wait(b+"/replica?max_lag=5", 503); !strings.Contains(body, `"code":"Drained"`) {
		t.Errorf("drained b1 /replica: %s", body)
	}
	e.ok("undrain", "a1", "b1", "--name", "itrep")
	wait(a+"/primary", 200)
	wait(b+"/replica?max_lag=5", 200)
	e.sql("itrep", "b1", "STOP SLAVE 'a' SQL_THREAD")
	if body := wait(b+"/replica", 503); !strings.Contains(body, `"code":"Stopped"`) {
		t.Errorf("b1 /replica with the SQL thread stopped: %s", body)
	}
}

// agentClient GETs agent URLs from inside a namespace.
func agentClient(ns string) func(url string) (int, string) {
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return netns.Dial(ctx, ns, network, addr)
		}}}
	return func(url string) (int, string) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}
