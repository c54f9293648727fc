package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDisks: the emulated disks' tests run beside each other but apart
// from every other test (before them): each lays out disk images,
// makes file systems and drives fio through its disk daemons, and that I/O
// beside the other tests' Galera labs once held their group communication
// for 1.4 s (every node's "last inactive check" late), long enough to split
// them. Their figures' lower bounds are loose for that company; how close
// the disks come to their classes alone is make bench's (scenario disks).
func TestDisks(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{{"Cloud3", testCloud3}, {"Classes", testDiskClasses}, {"MachineCaps", testMachineDiskCaps}, {"KilledUp", testKilledUpWithDisks}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

// testCloud3: the cloud3 preset (1-CPU machines, data on two striped
// 500-IOPS disks with the redo log (in the datadir), the binary log on a third, tmpdir on a local disk, a cluster NIC)
// comes up with each node's files on its volumes and each volume measured
// at its class, a sweep records every disk against its cap, fio measures a
// volume at its class (bad input refused), a failover drill passes, the data survives stop and start;
// after kill -9 of the disk daemon status names it and every node on its
// volumes, and start --all serves them again from their images with the
// data intact; after another kill -9, down leaves nothing (no mount, loop
// device, process or cgroup: checked by the env).
func testCloud3(t *testing.T) {
	e := newEnv(t)
	e.ok("up", "--preset", "cloud3", "--name", "itcloud")
	var st struct {
		Hosts []struct {
			Name    string `json:"name"`
			Volumes []struct {
				Name   string   `json:"name"`
				FS     string   `json:"fs"`
				Disks  []string `json:"disks"`
				Stripe int      `json:"stripe"`
				Mount  string   `json:"mount"`
			} `json:"volumes"`
			Measured []struct {
				Volume     string  `json:"volume"`
				IOPS       float64 `json:"iops"`
				TargetIOPS float64 `json:"target_iops"`
				Error      string  `json:"error"`
			} `json:"disks_measured"`
		} `json:"hosts"`
	}
	e.statusInto("itcloud", &st)
	if v := st.Hosts[0].Volumes; len(v) != 3 || v[0].Name != "data" || v[0].FS != "xfs" || len(v[0].Disks) != 2 || v[0].Stripe != 64<<10 || v[1].FS != "xfs" || v[2].Name != "tmp" {
		t.Fatalf("db1 volumes %+v", v)
	}
	if m := st.Hosts[0].Measured; len(m) != 3 || m[0].Error != "" || m[0].TargetIOPS != 1000 || m[0].IOPS < 500 || m[0].IOPS > 1150 {
		t.Errorf("db1's volumes as measured at up: %+v", m)
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	for _, v := range st.Hosts[0].Volumes {
		if !strings.Contains(string(mounts), v.Mount+" "+v.FS) {
			t.Errorf("%s is not mounted as %s", v.Mount, v.FS)
		}
	}
	got := e.sql("itcloud", "db1", "SELECT @@datadir, @@innodb_log_group_home_dir, @@log_bin_basename, @@tmpdir")
	if !strings.Contains(got, "/volumes/db1/data/mysql") || strings.Contains(got, "/volumes/db1/logs/redo") || !strings.Contains(got, "/volumes/db1/logs/binlog/binlog") ||
		!strings.Contains(got, "/volumes/db1/tmp/tmp") {
		t.Errorf("db1's files are not on its volumes: %s", got)
	}

	var run struct {
		Hosts []struct {
			Host  string `json:"host"`
			Disks []struct {
				Name     string  `json:"name"`
				IOPSCap  int     `json:"iops_cap"`
				IOPSMean float64 `json:"iops_mean"`
				IOPSMax  float64 `json:"iops_max"`
			} `json:"disks"`
		} `json:"hosts"`
	}
	e.sweepRecord("itcloud", &run, "--workload", "oltp_write_only", "--threads", "4", "--time", "5", "--tables", "1", "--table-size", "1000")
	disks := 0
	for _, h := range run.Hosts {
		for _, d := range h.Disks {
			disks++
			if (d.IOPSCap != 500 && d.IOPSCap != 20000) || d.IOPSMax > float64(d.IOPSCap)*1.15 {
				t.Errorf("%s %s: %.0f IOPS at most, cap %d", h.Host, d.Name, d.IOPSMax, d.IOPSCap)
			}
		}
	}
	if disks != 12 {
		t.Errorf("the run recorded %d disks, want 12", disks)
	}

	bad := e.run("bench", "disk", "--name", "itcloud", "--volume", "db9/data", "--test", "nope", "--runs", "0")
	if bad.code != 2 || !strings.Contains(bad.stderr, `--volume: unknown volume "db9/data"`) || !strings.Contains(bad.stderr, `--test: unknown test "nope"`) ||
		!strings.Contains(bad.stderr, "--runs: expected 1 to 100") {
		t.Errorf("bad bench disk input: exit %d\n%s", bad.code, bad.stderr)
	}
	var fio struct {
		Results []struct {
			Test       string  `json:"test"`
			IOPS       float64 `json:"iops"`
			P50        float64 `json:"p50_ms"`
			TargetIOPS float64 `json:"target_iops"`
			TargetMs   float64 `json:"target_ms"`
		} `json:"results"`
	}
	e.benchDisk("itcloud", &fio, 2, "--volume", "db1/data", "--test", "randwrite,latency", "--time", "3")
	if r := fio.Results[0]; r.TargetIOPS != 1000 || r.IOPS < 500 || r.IOPS > 1150 {
		t.Errorf("fio random writes on two striped 500-IOPS disks: %+v", r)
	}
	if r := fio.Results[1]; r.TargetMs != 2 || r.P50 < 1.8 || r.P50 > 5 {
		t.Errorf("fio reads one at a time on 2 ms disks: %+v", r)
	}
	if left, _ := filepath.Glob(filepath.Join(st.Hosts[0].Volumes[0].Mount, "hadrill-bench")); len(left) > 0 {
		t.Errorf("bench disk left its files: %v", left)
	}

	var d drillResult
	dr := e.runDrill("drill", "failover", "--name", "itcloud", "--rate", "30", "--before", "1s", "--after", "1s", "-o", "json")
	if err := json.Unmarshal([]byte(dr.stdout), &d); err != nil || !d.Passed || d.LostCount != 0 {
		t.Fatalf("failover drill on cloud3: exit %d %+v\n%s", dr.code, d, dr.stderr)
	}

	rows := e.val("itcloud", "db1", "SELECT COUNT(*) FROM sbtest.sbtest1")
	e.ok("stop", "--all", "--name", "itcloud")
	e.ok("start", "--all", "--name", "itcloud")
	if n := e.val("itcloud", "db2", "SELECT COUNT(*) FROM sbtest.sbtest1"); n != rows {
		t.Errorf("after stop and start db2 holds %s rows, want %s", n, rows)
	}

	pid, _ := os.ReadFile(filepath.Join(e.home, "labs", "itcloud", "disks", "daemon.pid"))
	p, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
	if p <= 0 {
		t.Fatal("no disk daemon pid")
	}
	_ = syscall.Kill(p, syscall.SIGKILL)

	// a dead disk daemon: status names it and every node on its volumes;
	// a write then crashes the servers; start --all serves the volumes
	// again from their images, and the data is there
	var lost struct {
		Disks struct{ State, Problem, Fix string } `json:"disks"`
		Nodes []struct {
			Name      string `json:"name"`
			DisksDown bool   `json:"disks_down"`
		} `json:"nodes"`
	}
	waitGone(t, p)
	e.statusInto("itcloud", &lost)
	if lost.Disks.State != "not serving" || !strings.Contains(lost.Disks.Problem, "the disk daemon is not running") || !strings.Contains(lost.Disks.Fix, "hadrill start --all") {
		t.Errorf("status with the disk daemon killed: %+v", lost.Disks)
	}
	for _, n := range lost.Nodes {
		if !n.DisksDown {
			t.Errorf("%s is not said to have lost its disks", n.Name)
		}
	}
	if r := e.run("status", "--name", "itcloud"); !strings.Contains(r.stdout, "DISKS DOWN") || !strings.Contains(r.stdout, "(disks down)") {
		t.Errorf("status text with the disk daemon killed:\n%s", r.stdout)
	}
	e.run("sql", "db1", "--name", "itcloud", "-e", "CREATE TABLE app.after_loss (id INT PRIMARY KEY) ENGINE=InnoDB")
	r := e.run("start", "--all", "--name", "itcloud")
	if r.code != 0 || !strings.Contains(r.stderr, "serving the volumes again from their images") || strings.Contains(r.stderr, "--force") {
		t.Fatalf("start --all after the disk daemon died: exit %d\n%s", r.code, r.stderr)
	}
	e.waitWhole("itcloud", "db1=Synced db2=Synced db3=Synced", 60*time.Second)
	if n := e.val("itcloud", "db3", "SELECT COUNT(*) FROM sbtest.sbtest1"); n != rows {
		t.Errorf("after the disks were served again db3 holds %s rows, want %s", n, rows)
	}
	e.statusInto("itcloud", &lost)
	if lost.Disks.State != "serving" {
		t.Errorf("disks after start --all: %+v", lost.Disks)
	}
	pid, _ = os.ReadFile(filepath.Join(e.home, "labs", "itcloud", "disks", "daemon.pid"))
	if p, _ = strconv.Atoi(strings.TrimSpace(string(pid))); p > 0 {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	e.ok("down", "--name", "itcloud")
	e.assertNoLeftovers()
}

// waitGone waits until a process killed is gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("pid %d still there", pid)
		}
	}
}

// testKilledUpWithDisks: kill -9 of hadrill once the volumes are mounted,
// then down leaves nothing.
func testKilledUpWithDisks(t *testing.T) {
	e := newEnv(t)
	spec := e.writeSpec("itkd", "name: itkd\nclusters: [{name: db, kind: standalone, storage: {volumes: [{name: data, disk: premium, count: 2}, {name: logs, disk: standard}], redo: logs}}]\n")
	c, _ := e.startUp("hosts and datadirs ready", "-f", spec)
	syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	c.Wait()
	e.ok("down", "--name", "itkd")
	e.assertNoLeftovers()
}

// testDiskClasses: a bursting disk runs at its burst rate while its credits
// last, then at its caps (seen second by second in the run's disks.csv); a
// host-cached disk answers reads of data it has seen from the cache; the
// file systems have the allocation unit asked for; the run is reported.
func testDiskClasses(t *testing.T) {
	e := newEnv(t)
	spec := e.writeSpec("itdc", `name: itdc
disks:
  - {name: bursty, iops: 100, throughput: 60M, latency: 2ms, size: 2G, burst: {iops: 400, duration: 4s}}
  - {name: cached, iops: 100, throughput: 60M, latency: 2ms, size: 2G, caching: read}
clusters:
  - {name: db, kind: standalone, storage: {volumes: [{name: data, disk: premium, fs: ext4, allocation_unit: 64K}, {name: b, disk: bursty}, {name: c, disk: cached, allocation_unit: 64K}]}}
`)
	e.ok("up", "-f", spec, "--name", "itdc")
	mounts, _ := os.ReadFile("/proc/mounts")
	if !strings.Contains(string(mounts), "/volumes/db1/data ext4") || !strings.Contains(string(mounts), "/volumes/db1/c xfs") {
		t.Errorf("volumes not mounted as asked:\n%s", mounts)
	}
	if out, err := exec.Command("xfs_info", filepath.Join(e.home, "labs", "itdc", "volumes", "db1", "c")).CombinedOutput(); err != nil || !strings.Contains(string(out), "bsize=65536") {
		t.Errorf("the c volume's XFS has not 64K blocks: %v\n%s", err, out)
	}

	// the bucket: 4 s at 400 IOPS; what the check at up spent is refilled
	// by the time the benchmark starts (idle time refills at 100 IOPS)
	time.Sleep(3 * time.Second)
	var res struct {
		RunID   string `json:"run_id"`
		Results []struct {
			Volume     string  `json:"volume"`
			IOPS       float64 `json:"iops"`
			TargetIOPS float64 `json:"target_iops"`
		} `json:"results"`
	}
	e.benchDisk("itdc", &res, 1, "--volume", "db1/b", "--test", "randwrite", "--time", "8")
	b := res.Results[0] // 8 s: about 4 at 400, then at 100 (the ramp spends some first)
	if b.IOPS < 120 || b.IOPS > 300 {
		t.Errorf("random writes on a bursting disk averaged %.0f IOPS over 8 s, want about 250 (4 s at 400, 4 s at 100)", b.IOPS)
	}
	cached := res
	cached.Results = nil
	e.benchDisk("itdc", &cached, 1, "--volume", "db1/c", "--test", "randread", "--time", "3")
	c := cached.Results[0] // reads of the file fio laid out just before: the host cache holds it
	if c.IOPS < 3*c.TargetIOPS {
		t.Errorf("random reads of cached data on a host-cached disk: %.0f IOPS, want well above the disk's %.0f", c.IOPS, c.TargetIOPS)
	}
	csv, err := os.ReadFile(filepath.Join(e.home, "runs", res.RunID, "disks.csv"))
	if err != nil {
		t.Fatal(err)
	}
	high, low := 0, 0
	for _, line := range strings.Split(string(csv), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 6 || f[2] != "db1-b1" {
			continue
		}
		iops, _ := strconv.ParseFloat(f[4], 64)
		switch {
		case iops > 300:
			high++
		case iops > 50 && iops < 130:
			low++
		}
	}
	if high < 2 || low < 2 {
		t.Errorf("the bursting disk's seconds: %d at the burst rate, %d at its caps; want both\n%s", high, low, csv)
	}
	e.ok("report", res.RunID, "-o", filepath.Join(e.home, "r.html"))
	e.ok("down", "--name", "itdc")
	e.assertNoLeftovers()
}

// testMachineDiskCaps: a volume striped over 16 disks (as document 003's)
// on a machine whose own disk cap is below the disks' sum: the volume
// gives the machine's IOPS, not the disks' (the check at up and the
// benchmark both judge against it).
func testMachineDiskCaps(t *testing.T) {
	e := newEnv(t)
	spec := e.writeSpec("itmc", `name: itmc
machines:
  - {name: vm, cpus: 1, memory: 2G, disk_iops: 400}
disks:
  - {name: small, iops: 100, throughput: 60M, latency: 2ms, size: 1G}
clusters:
  - {name: db, kind: standalone, machine: vm, storage: {volumes: [{name: data, disk: small, count: 16}]}}
`)
	e.ok("up", "-f", spec, "--name", "itmc")
	var res struct {
		Results []struct {
			IOPS       float64 `json:"iops"`
			TargetIOPS float64 `json:"target_iops"`
		} `json:"results"`
	}
	e.benchDisk("itmc", &res, 1, "--volume", "db1/data", "--test", "randread", "--time", "5")
	r := res.Results[0]
	if r.TargetIOPS != 400 || r.IOPS < 200 || r.IOPS > 460 {
		t.Errorf("16 × 100-IOPS disks on a machine capped at 400 IOPS: %.0f IOPS (target %.0f), want about 400", r.IOPS, r.TargetIOPS)
	}
	e.ok("down", "--name", "itmc")
	e.assertNoLeftovers()
}
