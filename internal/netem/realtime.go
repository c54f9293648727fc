package netem

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// priorityNice is the daemon's nice value: the highest CFS weight (about
// 88 times a nice-0 task's), so that a release loop or a queue reader woken
// while the load saturates every CPU runs at once instead of waiting for its
// time slice. Not SCHED_FIFO: measured, a Go process under it (whole or just
// the release loops' locked threads) was late by up to 230 ms, because
// FIFO threads are never time-sliced and the runtime's hand-offs between
// its threads then wait behind a spinning one.
const priorityNice = -20

// raisePriority gives every thread of the daemon priorityNice; threads the
// runtime starts later inherit it from the thread that starts them.
func raisePriority() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, priorityNice); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}
