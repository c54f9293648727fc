package machine

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

func labPlan() *plan.Plan {
	return &plan.Plan{Lab: "lab", Cgroups: map[string]string{"cpu": "/cg/cpu/hadrill/lab", "cpuacct": "/cg/cpuacct/hadrill/lab", "memory": "/cg/memory/u/hadrill/lab"},
		Hosts: []plan.Host{{Name: "db1", Machine: &plan.Machine{Name: "small", CPUs: 0.5, MemoryBytes: 1 << 30}}, {Name: "client"}}}
}

func TestEnter(t *testing.T) {
	got := strings.Join(Enter(labPlan(), "db1", []string{"ip", "netns", "exec", "ns", "mariadbd"}), " | ")
	want := "/bin/sh | -c | echo $$ > /cg/cpu/hadrill/lab/db1/cgroup.procs && echo $$ > /cg/cpuacct/hadrill/lab/db1/cgroup.procs && " +
		"echo $$ > /cg/memory/u/hadrill/lab/db1/cgroup.procs && exec \"$@\" | sh | ip | netns | exec | ns | mariadbd"
	if got != want {
		t.Errorf("Enter:\n got %s\nwant %s", got, want)
	}
	if got := Enter(&plan.Plan{}, "db1", []string{"x"}); len(got) != 1 {
		t.Errorf("a lab without cgroups runs argv as it is, got %q", got)
	}
}

func TestTeardownRefusesForeignDirs(t *testing.T) {
	p := labPlan()
	p.Cgroups = map[string]string{"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct", "memory": "/sys/fs/cgroup/memory"}
	if err := Teardown(p); err == nil || !strings.Contains(err.Error(), "not a lab's cgroup") {
		t.Fatalf("teardown of a cgroup that is not the lab's: %v", err)
	}
}

func TestCores(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := Usage{At: t0, CPU: time.Second}
	b := Usage{At: t0.Add(2 * time.Second), CPU: 2 * time.Second}
	if c := Cores(a, b); c != 0.5 {
		t.Errorf("1 s of CPU over 2 s = %v cores, want 0.5", c)
	}
	if c := Cores(b, a); c != 0 {
		t.Errorf("readings out of order: %v, want 0", c)
	}
}

func TestSummarizeAndWarn(t *testing.T) {
	p := labPlan()
	var samples []Sample
	for i := 1; i <= 10; i++ {
		db := Sample{T: float64(i), Host: "db1", Cores: 0.49, Throttled: 0.5, MemoryBytes: int64(i) << 20}
		if i <= 2 {
			db.Cores = 0.1
		}
		if i >= 9 {
			db.OOMKills = 1
		}
		samples = append(samples, db, Sample{T: float64(i), Host: "client", Cores: 0.2, MemoryBytes: 5 << 20})
	}
	sums := Summarize(samples, p.Hosts)
	if len(sums) != 2 || sums[0].Host != "db1" || sums[1].Host != "client" {
		t.Fatalf("summaries %+v", sums)
	}
	db := sums[0]
	if db.CPUMax != 0.49 || db.CPUP95 != 0.49 || db.AtCap != 0.8 || db.MemoryPeakBytes != 10<<20 || db.OOMKills != 1 || db.ThrottledSeconds != 5 {
		t.Errorf("db1 %+v", db)
	}
	if mean := db.CPUMean; mean < 0.411 || mean > 0.413 {
		t.Errorf("db1 mean %v, want 0.412", mean)
	}
	if sums[1].AtCap != 0 || sums[1].Machine != nil {
		t.Errorf("an unlimited host has no quota to be at: %+v", sums[1])
	}
	w := strings.Join(Warnings(sums), "\n")
	for _, want := range []string{"host db1: 1 process(es) killed by the memory limit of its machine small (0.5 CPUs, 1G)",
		"host db1: at its machine's CPU quota (0.5 cores) 80 % of the run"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	if strings.Contains(w, "client") {
		t.Errorf("an unlimited, unharmed host is not warned about: %q", w)
	}
	if Summarize(nil, p.Hosts) != nil {
		t.Error("no samples: no summaries")
	}
}

func TestRecorderSkipsUnmeasuredLabs(t *testing.T) {
	r := Record(func(string) (Usage, bool) { return Usage{}, false }, labPlan().Hosts, time.Millisecond)
	if s := r.Stop(); len(s) != 0 {
		t.Errorf("samples of unmeasured hosts: %v", s)
	}
}

func TestRecorder(t *testing.T) {
	start := time.Now()
	n := 0
	read := func(host string) (Usage, bool) {
		if host != "db1" {
			return Usage{}, false
		}
		n++
		return Usage{At: start.Add(time.Duration(n) * 100 * time.Millisecond), CPU: time.Duration(n) * 50 * time.Millisecond, OOMKills: n / 3}, true
	}
	r := Record(read, labPlan().Hosts, 5*time.Millisecond)
	time.Sleep(30 * time.Millisecond)
	s := r.Stop()
	if len(s) < 2 {
		t.Fatalf("samples %v", s)
	}
	halfCore(t, s)
	// kills are counted from the first reading (n = 1, none) to the last (n = len(s)+1)
	if last := s[len(s)-1]; last.OOMKills != (len(s)+1)/3 {
		t.Errorf("last sample %+v after %d readings", last, len(s)+1)
	}
}

// A host whose first readings fail (a remote host connecting) is measured
// from its first answer on, not left out of the run.
func TestRecorderMeasuresALateHost(t *testing.T) {
	start := time.Now()
	n := 0
	read := func(host string) (Usage, bool) {
		if host != "db1" {
			return Usage{}, false
		}
		if n++; n <= 2 {
			return Usage{}, false
		}
		return Usage{At: start.Add(time.Duration(n) * 100 * time.Millisecond), CPU: time.Duration(n) * 50 * time.Millisecond}, true
	}
	r := Record(read, labPlan().Hosts, 5*time.Millisecond)
	time.Sleep(40 * time.Millisecond)
	s := r.Stop()
	if len(s) < 2 {
		t.Fatalf("samples of a host that answered late: %v", s)
	}
	halfCore(t, s)
}

func TestNICRatesAndSummary(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := Usage{At: t0, NICs: []NICBytes{{Name: "eth1", Network: "cluster", RateBps: 50e6, Tx: 1000, Rx: 0}}}
	b := Usage{At: t0.Add(2 * time.Second), NICs: []NICBytes{{Name: "eth1", Network: "cluster", RateBps: 50e6, Tx: 1000 + 5e6, Rx: 1e6}}}
	r := nicRates(a, b)
	if len(r) != 1 || r[0].TxBps != 20e6 || r[0].RxBps != 4e6 || r[0].RateBps != 50e6 {
		t.Fatalf("rates %+v, want 20 Mbit/s out, 4 in", r)
	}
	samples := []Sample{{T: 2, Host: "db1", NICs: r}, {T: 4, Host: "db1", NICs: []NICRate{{Name: "eth1", Network: "cluster", RateBps: 50e6}}}}
	sums := Summarize(samples, labPlan().Hosts)
	n := sums[0].NICs
	if len(n) != 1 || n[0].TxBytes != 5e6 || n[0].RxBytes != 1e6 || n[0].TxMaxBps != 20e6 || n[0].TxMeanBps != 10e6 {
		t.Errorf("NIC summary %+v: 5 MB sent over 4 s (10 Mbit/s mean, 20 at most)", n)
	}
	if nicRates(b, a)[0].TxBps != 0 {
		t.Error("counters going back (a NIC made again) give no rate")
	}
}

// halfCore checks that every sample is db1's, using half a core (the
// readers above give it 50 ms of CPU every 100 ms).
func halfCore(t *testing.T, s []Sample) {
	t.Helper()
	for _, x := range s {
		if x.Host != "db1" || x.Cores < 0.49 || x.Cores > 0.51 {
			t.Errorf("sample %+v, want db1 at 0.5 cores", x)
		}
	}
}

// TestDiskRates: a disk's IOPS over a period are every IO it served; its
// storage IOPS leave out the reads a host cache answered.
func TestDiskRates(t *testing.T) {
	at := time.Unix(100, 0)
	a := Usage{At: at, Disks: []DiskIO{{Name: "db1-data1", Ops: 1000, Bytes: 1 << 20, CacheHits: 100, TicksMs: 500, BusyMs: 100}}}
	b := Usage{At: at.Add(2 * time.Second), Disks: []DiskIO{{Name: "db1-data1", Ops: 1400, Bytes: 2 << 20, CacheHits: 250, TicksMs: 900, BusyMs: 600}}}
	r := diskRates(a, b)
	if len(r) != 1 || r[0].IOPS != 200 || r[0].StorageIOPS != 125 || r[0].LatencyMs != 1 || r[0].Util != 0.25 {
		t.Errorf("rates: %+v, want 200 IOPS, 125 of them storage's", r)
	}
}
