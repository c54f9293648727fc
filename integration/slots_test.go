package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// slots admits the tests that hold labs, three at a time (HADRILL_TEST_SLOTS;
// at four this computer's drills refused their load), the longest first.
// go test starts its paused parallel tests in no order (make integration
// lets every one of them resume at once: -parallel 64), so a long test
// often started last and ran alone at the end; here each waits for a slot,
// and a free slot goes to the waiter earliest in longestFirst, then to the
// one that came first. A slot is given only once no test has come for
// settle, so that the tests resumed together are all seen before the
// first choice. A test's slot is given back when it ends, after its
// subtests: parallel subtests take slots of their own (TestDisks' do) only
// under a test that holds none, or three such tests would wait forever.
var slots = struct {
	sync.Mutex
	free    int
	waiting []*slotWaiter
	last    time.Time // the last arrival
	seq     int
	held    map[string]bool // by test name
}{free: slotCount(), held: map[string]bool{}}

// longestFirst are the tests that hold a lab slot, the longest first (the
// mean seconds each ran in two fresh clones on 2026-12-01, from the end of
// make test's log: its slowest and the line after them); TestAutoFailover,
// which mostly waits, comes before TestDrills, which keeps the CPUs busy:
// the three that start together are not the three heaviest. Every test of
// ten seconds or more is here: one left out ranks after all of them, and a
// long one that starts last runs alone at the end (TestConsistency and
// TestReadsOnReplicas, 80 s together, did). TestLongestFirstNamesTests
// keeps the names true.
var longestFirst = []string{
	"TestDiskFaults",           // 164.1
	"TestSSHLab",               // 141.9
	"TestAutoFailover",         // 107.9
	"TestDrills",               // 104.7
	"TestTPCC",                 // 96.8
	"TestStudy",                // 55.0
	"TestTPCCStudy",            // 54.8
	"TestTrust",                // 53.5
	"TestSysbenchSweep",        // 50.5
	"TestSSHStudy",             // 46.0
	"TestReadsOnReplicas",      // 44.7
	"TestArbitrator",           // 41.8
	"TestLifecycle",            // 40.3
	"TestChaos",                // 38.9
	"TestFaults",               // 38.3
	"TestConsistency",          // 37.1
	"TestWAN",                  // 37.0
	"TestStudyEndpointAndSlap", // 36.1
	"TestRelaxedOutage",        // 31.1
	"TestSSHWAN",               // 30.6
	"TestSemiSyncFallback",     // 25.9
	"TestFileFaults",           // 25.6
	"TestDRChannel",            // 25.2
	"TestClusterNetwork",       // 23.6
	"TestSSHDR",                // 22.4
	"TestDonorProbe",           // 21.8
	"TestMonitoring",           // 21.6
	"TestFullOutageRecover",    // 21.1
	"TestDomainOutage",         // 19.8
	"TestLoadBalancerRoutesOnlyToHealthyNodes", // 19.6
	"TestLayer4LoadBalancer",                   // 14.0
	"TestSemiSyncReceipt",                      // 13.2
	"TestPeerToPeer",                           // 11.5
	"TestMemoryLimitKill",                      // 10.7
}

const settle = 200 * time.Millisecond

type slotWaiter struct {
	rank, seq int
}

func slotCount() int {
	if n, err := strconv.Atoi(os.Getenv("HADRILL_TEST_SLOTS")); err == nil && n > 0 {
		return n
	}
	return 3
}

func rank(name string) int {
	top := strings.SplitN(name, "/", 2)[0]
	for i, n := range longestFirst {
		if n == top {
			return i
		}
	}
	return len(longestFirst)
}

// takeSlot waits for a slot for t (once per test: a test with two homes
// holds one, and a subtest of a test that took one runs in its parent's:
// sequential subtests, each with a home of its own, would otherwise wait
// in the queue again for each) and gives it back when t ends. It logs how
// long it waited: the test log's reader counts a test's time from then.
func takeSlot(t *testing.T) {
	t.Helper()
	top, _, sub := strings.Cut(t.Name(), "/")
	slots.Lock()
	if slots.held[t.Name()] || sub && slots.held[top] {
		slots.Unlock()
		return
	}
	slots.seq++
	w := &slotWaiter{rank: rank(t.Name()), seq: slots.seq}
	slots.waiting = append(slots.waiting, w)
	slots.last = time.Now()
	slots.Unlock()
	began := time.Now()
	for !admit(w) {
		time.Sleep(20 * time.Millisecond)
	}
	slots.Lock()
	slots.held[t.Name()] = true
	slots.Unlock()
	t.Logf("a lab slot taken after %.1f s", time.Since(began).Seconds())
	t.Cleanup(func() {
		slots.Lock()
		delete(slots.held, t.Name())
		slots.free++
		slots.Unlock()
	})
}

// admit gives w a slot when one is free, no test came for settle, and w
// is the first waiter by rank and arrival.
func admit(w *slotWaiter) bool {
	slots.Lock()
	defer slots.Unlock()
	if slots.free == 0 || time.Since(slots.last) < settle {
		return false
	}
	best := 0
	for i, o := range slots.waiting {
		if o.rank < slots.waiting[best].rank || (o.rank == slots.waiting[best].rank && o.seq < slots.waiting[best].seq) {
			best = i
		}
	}
	if slots.waiting[best] != w {
		return false
	}
	slots.waiting = append(slots.waiting[:best], slots.waiting[best+1:]...)
	slots.free--
	return true
}

// TestLongestFirstNamesTests: every name in longestFirst is a test of this
// package, once (a test renamed would otherwise lose its rank unseen and
// start last).
func TestLongestFirstNamesTests(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("this package's test files: %v", err)
	}
	tests := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			tests[string(m[1])] = true
		}
	}
	seen := map[string]bool{}
	for _, n := range longestFirst {
		if !tests[n] {
			t.Errorf("longestFirst names %s, which is no test here", n)
		}
		if seen[n] {
			t.Errorf("longestFirst names %s twice", n)
		}
		seen[n] = true
	}
}
