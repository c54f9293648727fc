package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestCloud3: the cloud3 preset (1-CPU machines, data on two striped
// 500-IOPS disks, logs on a third, a cluster NIC) comes up with each node's
// files on its volumes, a sweep records every disk against its cap, a
// failover drill passes, the data survives stop and start, and after kill -9
// of the disk daemon, down leaves nothing (no mount, loop device, process
// or cgroup: checked by the env).
func TestCloud3(t *testing.T) {
	e := newEnv(t)
	e.ok("up", "--preset", "cloud3", "--name", "itcloud")
	var st struct {
		Hosts []struct {
			Name    string `json:"name"`
			Volumes []struct {
				Name  string   `json:"name"`
				FS    string   `json:"fs"`
				Disks []string `json:"disks"`
				Mount string   `json:"mount"`
			} `json:"volumes"`
		} `json:"hosts"`
	}
	e.statusInto("itcloud", &st)
	if v := st.Hosts[0].Volumes; len(v) != 2 || v[0].Name != "data" || v[0].FS != "btrfs" || len(v[0].Disks) != 2 || v[1].FS != "xfs" {
		t.Fatalf("db1 volumes %+v", v)
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	for _, v := range st.Hosts[0].Volumes {
		if !strings.Contains(string(mounts), v.Mount+" "+v.FS) {
			t.Errorf("%s is not mounted as %s", v.Mount, v.FS)
		}
	}
	got := e.sql("itcloud", "db1", "SELECT @@datadir, @@innodb_log_group_home_dir, @@log_bin_basename")
	if !strings.Contains(got, "/volumes/db1/data/mysql") || !strings.Contains(got, "/volumes/db1/logs/redo") || !strings.Contains(got, "/volumes/db1/logs/binlog/binlog") {
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
			if d.IOPSCap != 500 || d.IOPSMax > 500*1.15 {
				t.Errorf("%s %s: %.0f IOPS at most, cap %d", h.Host, d.Name, d.IOPSMax, d.IOPSCap)
			}
		}
	}
	if disks != 9 {
		t.Errorf("the run recorded %d disks, want 9", disks)
	}

	var d drillResult
	dr := e.run("drill", "failover", "--name", "itcloud", "--rate", "30", "-o", "json")
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
	e.ok("down", "--name", "itcloud")
	e.assertNoLeftovers()
}

// TestKilledUpWithDisks: kill -9 of hadrill once the volumes are mounted,
// then down leaves nothing.
func TestKilledUpWithDisks(t *testing.T) {
	e := newEnv(t)
	spec := e.writeSpec("itkd", "name: itkd\nclusters: [{name: db, kind: standalone, storage: {volumes: [{name: data, disk: premium, count: 2}, {name: logs, disk: standard}], redo: logs}}]\n")
	c, _ := e.startUp("hosts and datadirs ready", "-f", spec)
	syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	c.Wait()
	e.ok("down", "--name", "itkd")
	e.assertNoLeftovers()
}
