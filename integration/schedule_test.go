package integration

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests' own scheduler. make integration lets Go start every parallel
// test at once (-parallel 64) and this decides which run: at most
// HADRILL_TEST_SLOTS tests that own labs (3 by default) at a time, the
// longest first. Go's own -parallel starts them in no useful order, and a
// run whose last test is a two-minute one ends on that test alone; longest
// first, the short ones fill the end. A test holds its slot from its first
// env to its end; a test whose every env is made before it calls
// t.Parallel (the serial ones) takes a slot too, while nothing else runs;
// a test's subtests share its slot (TestDisks' run beside each other).
var slots = struct {
	sync.Mutex
	cond    *sync.Cond
	free    int
	waiting map[string]int // a waiting test's expected seconds
	held    map[string]bool
}{waiting: map[string]int{}, held: map[string]bool{}}

func init() {
	slots.cond = sync.NewCond(&slots.Mutex)
	slots.free = 3
	if n, err := strconv.Atoi(os.Getenv("HADRILL_TEST_SLOTS")); err == nil && n > 0 {
		slots.free = n
	}
}

// expected are the tests that take longest, in seconds (measured by make
// test on this computer, a busy run's figures); any other test counts 20.
var expected = map[string]int{
	"TestSSHLab": 197, "TestTPCC": 155, "TestDiskFaults": 143, "TestDrills": 126, "TestAutoFailover": 108, "TestTPCCStudy": 91,
	"TestSSHStudy": 72, "TestTrust": 63, "TestRelaxedOutage": 60, "TestSSHDR": 56, "TestStudy": 56, "TestSSHWAN": 46, "TestChaos": 45,
	"TestWAN": 42, "TestConsistency": 42, "TestFaults": 42, "TestArbitrator": 41, "TestStudyEndpointAndSlap": 39, "TestReadsOnReplicas": 39,
	"TestDRChannel": 37, "TestMonitoring": 34, "TestFullOutageRecover": 33,
}

// slot waits until t may run beside the tests running now: a slot is free
// and no waiting test is expected to take longer. Its release is t's last
// cleanup.
func slot(t *testing.T) {
	name, _, _ := strings.Cut(t.Name(), "/") // a test's subtests share its slot
	slots.Lock()
	defer slots.Unlock()
	if slots.held[name] {
		return // a second env of the same test
	}
	secs, ok := expected[name]
	if !ok {
		secs = 20
	}
	slots.waiting[name] = secs
	for slots.free == 0 || longerWaiting(name, secs) {
		slots.cond.Wait()
	}
	delete(slots.waiting, name)
	slots.free--
	slots.held[name] = true
	t.Cleanup(func() {
		slots.Lock()
		defer slots.Unlock()
		slots.free++
		delete(slots.held, name)
		slots.cond.Broadcast()
	})
}

// longerWaiting says whether a test expected to take longer than secs
// waits too (ties go by name, so one of them goes first).
func longerWaiting(name string, secs int) bool {
	for n, s := range slots.waiting {
		if s > secs || s == secs && n < name {
			return true
		}
	}
	return false
}
