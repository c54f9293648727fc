package netem

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// rtPriority is the daemon's SCHED_FIFO priority: above every ordinary
// task (the servers, the load, the benchmark), below the kernel's own
// real-time threads (50 and up).
const rtPriority = 20

// realtime puts every thread of the daemon under SCHED_FIFO. Threads the
// runtime starts later inherit it from the thread that starts them. The
// emulator matters most when the CPUs are saturated (during a benchmark):
// without it a release loop or a queue reader waits behind the load for its
// time slice, and that wait is added to the round trip. The kernel's
// real-time throttling (95 % of each second) still bounds what it may take;
// the daemon's work is a few µs per packet.
func realtime() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: rtPriority}, 0); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}
