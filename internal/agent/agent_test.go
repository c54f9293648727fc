package agent

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/galera"
)

func newServer(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = 200 * time.Millisecond
	}
	s := httptest.NewServer(Handler(NewProber(o)))
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestUnreadableCredentialsIs503WithReason(t *testing.T) {
	s := newServer(t, Options{Node: "db1", Socket: "/nonexistent.sock", PasswordFile: "/nonexistent/pw"})
	code, body := get(t, http.MethodGet, s.URL+"/")
	if code != 503 || !strings.Contains(body, "credentials file unreadable") || !strings.Contains(body, `"code":"Unreachable"`) {
		t.Fatalf("%d %s", code, body)
	}
}

func TestUnreachableServerIs503AndNoSecretLeaks(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("s3cretPassw0rd\n"), 0o600)
	s := newServer(t, Options{Node: "db1", Socket: filepath.Join(dir, "no.sock"), User: "hdcheck", PasswordFile: pw})
	for _, path := range []string{"/", "/health", "/metrics", "/liveness"} {
		code, body := get(t, http.MethodGet, s.URL+path)
		if code == 200 && path != "/metrics" {
			t.Errorf("%s: 200 for an unreachable server", path)
		}
		if strings.Contains(body, "s3cretPassw0rd") {
			t.Errorf("%s leaks the password: %s", path, body)
		}
	}
	if code, body := get(t, http.MethodHead, s.URL+"/"); code != 503 || body != "" {
		t.Errorf("HEAD: %d %q", code, body)
	}
	if code, body := get(t, http.MethodOptions, s.URL+"/"); code != 503 || body != "" {
		t.Errorf("OPTIONS: %d %q", code, body)
	}
	if _, body := get(t, http.MethodGet, s.URL+"/metrics"); !strings.Contains(body, `hadrill_up{node="db1"} 0`) {
		t.Errorf("metrics: %s", body)
	}
	if code, _ := get(t, http.MethodGet, s.URL+"/nope"); code != 404 {
		t.Errorf("unknown path: %d", code)
	}
}

func TestVerdictIsCached(t *testing.T) {
	dir := t.TempDir()
	p := NewProber(Options{Node: "db1", Socket: filepath.Join(dir, "no.sock"), PasswordFile: filepath.Join(dir, "pw"),
		Timeout: 100 * time.Millisecond, Cache: time.Hour})
	a := p.Check(t.Context())
	os.WriteFile(filepath.Join(dir, "pw"), []byte("x"), 0o600) // would change the reason if probed again
	if b := p.Check(t.Context()); b.At != a.At || b.Reason != a.Reason {
		t.Fatalf("not cached: %+v then %+v", a, b)
	}
}

// TestBusy: a probe the server did not answer in time keeps the verdict
// it last answered only while its process runs and for the grace; a
// refused probe, a paused or gone server, a last answer that refused the
// node or one too old all give the probe's own failure.
func TestBusy(t *testing.T) {
	now := time.Unix(1000, 0)
	synced := &Result{Verdict: galera.Verdict{OK: true, Code: galera.CodeSynced, State: "Synced", Reason: "Synced and in the primary component"}, At: now.Add(-time.Second)}
	joining := &Result{Verdict: galera.Verdict{Code: galera.CodeJoining, State: "Joiner"}, At: now.Add(-time.Second)}
	slow := &slowError{300 * time.Millisecond}
	for _, c := range []struct {
		name    string
		err     error
		running bool
		good    *Result
		grace   time.Duration
		want    bool
	}{
		{"slow, running, answered 1 s ago", slow, true, synced, 2 * time.Second, true},
		{"a connection the timeout broke", mysql.ErrInvalidConn, true, synced, 2 * time.Second, true},
		{"slow past the grace", slow, true, synced, 500 * time.Millisecond, false},
		{"no grace", slow, true, synced, 0, false},
		{"paused, gone or restarted (another process)", slow, false, synced, 2 * time.Second, false},
		{"refused", errors.New("dial unix mysqld.sock: connect: connection refused"), true, synced, 2 * time.Second, false},
		{"its last answer refused it", slow, true, joining, 2 * time.Second, false},
		{"never answered", slow, true, nil, 2 * time.Second, false},
	} {
		v, ok := busy(c.err, c.running, c.good, now, c.grace)
		if ok != c.want {
			t.Errorf("%s: busy %v, want %v", c.name, ok, c.want)
			continue
		}
		if ok && (!v.OK || v.Code != galera.CodeSynced || !strings.Contains(v.Reason, "busy: ") || !strings.Contains(v.Reason, "last answered 1.0 s ago")) {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
}
