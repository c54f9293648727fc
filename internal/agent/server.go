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
		code := http.StatusServiceUnavailable
		if res.OK {
			code = http.StatusOK
		}
		w.Header().Set("X-Hadrill-Verdict", res.Code)
		if r.Method == http.MethodHead || r.Method == http.MethodOptions {
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(res)
	}
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
		if serverAlive(p.o.PidFile) {
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

func serverAlive(pidFile string) bool {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && pid > 0 && syscall.Kill(pid, 0) == nil
}
