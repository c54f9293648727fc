package agent

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Handler serves the agent's endpoints:
//
//	/ and /health  200 when the node may take traffic, else 503; HEAD and
//	               OPTIONS answer the status only, GET adds JSON
//	/liveness      200 while the server process exists (lenient during
//	               state transfer, when it serves no queries), else 503
//	/metrics       Prometheus text format
func Handler(p *Prober) http.Handler {
	mux := http.NewServeMux()
	health := func(w http.ResponseWriter, r *http.Request) {
		res := p.Check(r.Context())
		answer(w, r, res.OK, res.Code, res)
	}
	mux.HandleFunc("/primary", func(w http.ResponseWriter, r *http.Request) {
		var v galera.Verdict
		if s, err := p.Replication(r.Context()); err != nil {
			v = galera.Unreachable(err)
		} else {
			v = replication.JudgePrimary(s)
		}
		answer(w, r, v.OK, v.Code, Result{Verdict: v, Node: p.o.Node, At: time.Now()})
	})
	mux.HandleFunc("/replica", func(w http.ResponseWriter, r *http.Request) {
		maxLag := -1
		if q := r.URL.Query().Get("max_lag"); q != "" {
			n, err := strconv.Atoi(q)
			if err != nil || n < 0 {
				http.Error(w, `{"error":"max_lag: expected a whole number of seconds >= 0"}`, http.StatusBadRequest)
				return
			}
			maxLag = n
		}
		var v galera.Verdict
		if s, err := p.Replication(r.Context()); err != nil {
			v = galera.Unreachable(err)
		} else {
			v = replication.JudgeReplica(s, maxLag)
		}
		answer(w, r, v.OK, v.Code, Result{Verdict: v, Node: p.o.Node, At: time.Now()})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		health(w, r)
	})
	mux.HandleFunc("/health", health)
	mux.HandleFunc("/liveness", func(w http.ResponseWriter, r *http.Request) {
		code, state := http.StatusServiceUnavailable, "down"
		if serverAlive(p.o.PidFile, p.o.ServerMarker) {
			code, state = http.StatusOK, "alive"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(map[string]string{"node": p.o.Node, "process": state})
		}
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		writeMetrics(w, p.o.Node, p.Check(r.Context()))
	})
	return mux
}

// answer writes a verdict: 200 or 503; HEAD and OPTIONS get the status
// only, GET the JSON body too.
func answer(w http.ResponseWriter, r *http.Request, ok bool, code galera.Code, body any) {
	status := http.StatusServiceUnavailable
	if ok {
		status = http.StatusOK
	}
	w.Header().Set("X-Hadrill-Verdict", string(code))
	if r.Method == http.MethodHead || r.Method == http.MethodOptions {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Serve runs the agent until ctx ends.
func Serve(ctx context.Context, o Options) error {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: Handler(NewProber(o)), ReadHeaderTimeout: 2 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// serverAlive says whether the pid in pidFile runs and, given a marker,
// is the server's (its command line holds the marker, as supervise.Owned
// checks): a pidfile left by a dead server whose pid another process
// took is not a live server.
func serverAlive(pidFile, marker string) bool { return serverPid(pidFile, marker) > 0 }

// serverPid is the server's pid as its pidfile names it, when that
// process lives and (with a marker) is the server (0: none).
func serverPid(pidFile, marker string) int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	switch {
	case err != nil || pid <= 0:
		return 0
	case marker != "" && !supervise.Owned(pid, marker):
		return 0
	case marker == "" && syscall.Kill(pid, 0) != nil:
		return 0
	}
	return pid
}
