package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
