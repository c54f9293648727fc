package workload

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload/workloadtest"
)

func TestStallLimit(t *testing.T) {
	for secs, want := range map[int]time.Duration{0: 0, -1: 0, 10: 10*time.Second + StallSlack, 60: time.Minute + StallSlack, 300: 10 * time.Minute} {
		if got := stallLimit(secs); got != want {
			t.Errorf("stallLimit(%d) = %v, want %v", secs, got, want)
		}
	}
}

// silentHost's commands never end by themselves (a sysbench whose server
// waits for space on a full volume), only by their context.
type silentHost struct{ host.Host }

func (silentHost) Run(ctx context.Context, _ []string, _ io.Reader) ([]byte, error) {
	<-ctx.Done()
	return []byte("sysbench 1.0.20\n"), ctx.Err()
}

type silentLab struct{ workloadtest.Lab }

func (silentLab) Host(string) host.Host { return silentHost{} }

// TestRunOnceStalled: a run past its limit is stopped and is an error
// saying why; one the user interrupts is partial, not an error.
func TestRunOnceStalled(t *testing.T) {
	l := silentLab{workloadtest.Lab{P: &plan.Plan{Lab: "t", Client: plan.Client{Host: "client"}}}}
	t0 := time.Now()
	_, _, err := runOnce(context.Background(), l, []string{"sysbench"}, 50*time.Millisecond, "")
	if err == nil || !strings.Contains(err.Error(), "was stopped: its server(s) stopped answering") || time.Since(t0) > 10*time.Second {
		t.Errorf("a stalled run: %v after %v", err, time.Since(t0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, _, err := runOnce(ctx, l, []string{"sysbench"}, time.Hour, "")
	if err != nil || !res.Partial {
		t.Errorf("an interrupted run: %v, partial %v", err, res.Partial)
	}
}

// TestTPCCRunStalled: a go-tpc run past its limit is stopped and is an
// error saying why, as a sysbench run is; one the user interrupts is not.
func TestTPCCRunStalled(t *testing.T) {
	l := silentLab{workloadtest.Lab{P: &plan.Plan{Lab: "t", Client: plan.Client{Host: "client"}}}}
	save := filepath.Join(t.TempDir(), "go-tpc.out")
	t0 := time.Now()
	_, _, err := runTPCCOnce(context.Background(), l, []string{"go-tpc"}, 50*time.Millisecond, save)
	if err == nil || !strings.Contains(err.Error(), "go-tpc still ran after") || time.Since(t0) > 10*time.Second {
		t.Errorf("a stalled run: %v after %v", err, time.Since(t0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := runTPCCOnce(ctx, l, []string{"go-tpc"}, time.Hour, save); err != nil && strings.Contains(err.Error(), "still ran") {
		t.Errorf("an interrupted run taken for stalled: %v", err)
	}
}
