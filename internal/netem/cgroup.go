package netem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// CPUShares is the daemon's CPU weight in its cgroup (cgroup v1 cpu.shares;
// an ordinary process weighs 1,024, and this is the most v1 allows). A
// packet is due at a moment: when the daemon wakes for it, the scheduler
// must run it at once, not after a busy process's time slice. With the
// weight of one ordinary process, and both CPUs saturated, releases came
// up to 161 ms late at 10,000 packets/s each way (the daemon fell behind
// the packets); with this weight, at most 3.3 ms and 0.3 % over 1 ms. The
// daemon uses what it needs only (0.3 of a CPU at that rate): a weight is
// a share when there is contention, never a reservation.
const CPUShares = 262144

// JoinCgroup makes dir, a cgroup v1 cpu cgroup, with the daemon's weight
// and moves this process (every thread) into it. leave moves it back into
// dir's parent and removes dir; the lab's teardown removes a dir left by a
// daemon that was killed (RemoveCgroup).
func JoinCgroup(dir string) (leave func(), err error) {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("netem: cgroup %s: %w", dir, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte(strconv.Itoa(CPUShares)), 0o644); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("netem: cgroup %s: cpu.shares: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0o644); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("netem: cgroup %s: joining it: %w", dir, err)
	}
	return func() {
		_ = os.WriteFile(filepath.Join(filepath.Dir(dir), "cgroup.procs"), pid, 0o644)
		_ = os.Remove(dir)
	}, nil
}

// RemoveCgroup removes a daemon's cgroup once its process is gone (a
// cgroup with a task in it cannot be removed: its exit is waited for, up to
// 10 s). Absent: nothing to do.
func RemoveCgroup(dir string) error {
	if dir == "" {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("netem: cgroup %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
