package facts

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Speed is how fast one of this computer's cores ran a fixed piece of
// work: the CPU time and the wall time of a fixed loop (the best of three
// tries). The figures of a CPU-bound lab (capped machines' TPS above all)
// move with it from day to day on a shared computer, where ratios measured
// within one run do not: a record of it beside each run lets a reader
// compare absolute figures of two days, or see why they differ.
type Speed struct {
	CPUMs  float64 `json:"loop_cpu_ms"`  // the loop's CPU time, the least of the tries
	WallMs float64 `json:"loop_wall_ms"` // its wall time in that try (more than its CPU time: the core was shared)
}

// loopTries is how many times CoreSpeed runs the loop, keeping the
// fastest (the least disturbed).
const loopTries = 3

// CoreSpeed runs the fixed loop on one thread and measures it (zero when
// the thread's CPU clock cannot be read).
func CoreSpeed() Speed {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var best Speed
	for range loopTries {
		c0, ok0 := threadCPU()
		w0 := time.Now()
		got := fixedLoop()
		wall := time.Since(w0)
		c1, ok1 := threadCPU()
		if !ok0 || !ok1 || got != loopResult { // its result is used: the loop cannot be dropped
			return Speed{}
		}
		s := Speed{CPUMs: ms(c1 - c0), WallMs: ms(wall)}
		if best.CPUMs == 0 || s.CPUMs < best.CPUMs {
			best = s
		}
	}
	return best
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// fixedLoop is the work CoreSpeed times: integer arithmetic and
// data-dependent loads and stores over 256 KiB (a core's caches, not
// memory), about 50 ms of CPU on a core of 2026. Its result is fixed
// (loopResult), so the work cannot change unnoticed.
func fixedLoop() uint64 {
	const n = 1 << 15 // 256 KiB of uint64
	a := make([]uint64, n)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range a {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		a[i] = x
	}
	var h uint64
	for range 300 {
		for i := range a {
			j := (a[i] ^ h) & (n - 1)
			h = h*31 + a[j]
			a[i] += h
		}
	}
	return h
}

// loopResult is fixedLoop's result.
const loopResult = 0xa5aad13d2e2d6fc
