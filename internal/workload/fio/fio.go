// Package fio is the disk benchmark hadrill runs on a node's volume: the
// tests (fio jobs), the command line of each and the figures read back
// from fio's JSON output (which the volume check at up reads too).
package fio

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Test is one fio job.
type Test struct {
	Name  string
	About string
	RW    string // fio's rw
	Block int64
	Depth int
	Fsync bool // fsync after every write (a commit's flush)
	File  bool // one whole file written through the page cache and flushed, timed (not time-based)
}

// Tests are the disk benchmark's jobs, in the order they run.
var Tests = []Test{
	{Name: "randread", About: "16K random reads, 16 outstanding: read IOPS", RW: "randread", Block: 16 << 10, Depth: 16},
	{Name: "randwrite", About: "16K random writes, 16 outstanding: write IOPS", RW: "randwrite", Block: 16 << 10, Depth: 16},
	{Name: "latency", About: "16K random reads one at a time: the time of one IO", RW: "randread", Block: 16 << 10, Depth: 1},
	{Name: "seqread", About: "1M sequential reads, 4 outstanding: read throughput", RW: "read", Block: 1 << 20, Depth: 4},
	{Name: "seqwrite", About: "1M sequential writes, 4 outstanding: write throughput", RW: "write", Block: 1 << 20, Depth: 4},
	{Name: "fsync", About: "16K writes each followed by fsync: flushes per second (what bounds durable commits)", RW: "write", Block: 16 << 10, Depth: 1, Fsync: true},
	{Name: "file1g", About: "a new 1 GB file written (allocated as it is written, not beforehand) and flushed (document 003's test): seconds", RW: "write", Block: 1 << 20, Depth: 1, File: true},
}

// Named finds a test.
func Named(name string) (Test, bool) {
	for _, t := range Tests {
		if t.Name == name {
			return t, true
		}
	}
	return Test{}, false
}

// Names lists the tests.
func Names() []string {
	var out []string
	for _, t := range Tests {
		out = append(out, t.Name)
	}
	return out
}

// FileSize is the size of the file the time-based tests work in, and of
// the file1g test's file.
const (
	FileSize  = 256 << 20
	WholeFile = 1 << 30
)

// Argv is the fio command for a test in dir, running for d (time-based
// tests).
func Argv(t Test, dir string, d time.Duration) []string {
	argv := []string{"fio", "--name=" + t.Name, "--rw=" + t.RW, "--bs=" + strconv.FormatInt(t.Block, 10), "--output-format=json"}
	switch {
	case t.File:
		return append(argv, "--filename="+filepath.Join(dir, "file1g"), "--size="+strconv.Itoa(WholeFile), "--ioengine=psync", "--end_fsync=1", "--fallocate=none")
	case t.Fsync:
		argv = append(argv, "--ioengine=psync", "--fsync=1")
	default:
		argv = append(argv, "--ioengine=libaio", "--direct=1", "--iodepth="+strconv.Itoa(t.Depth))
	}
	return append(argv, "--filename="+filepath.Join(dir, "work"), "--size="+strconv.Itoa(FileSize),
		"--runtime="+strconv.FormatInt(d.Milliseconds(), 10)+"ms", "--time_based", "--ramp_time=500ms")
}

// Result is what a test measured.
type Result struct {
	Test    string  `json:"test"`
	IOPS    float64 `json:"iops"`
	MBps    float64 `json:"mb_per_s"` // megabytes per second
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	Seconds float64 `json:"seconds"` // the run's time (file1g: to write and flush the file)
}

// Parse reads a test's figures from fio's JSON output (its first job).
func Parse(t Test, out []byte) (Result, error) {
	jobs, err := ParseJobs(t, out)
	if err != nil {
		return Result{}, err
	}
	return jobs[0], nil
}

// ParseJobs reads every job of fio's JSON output as the test t (its reads
// or its writes, an fsync test's flush time added to each write's).
func ParseJobs(t Test, out []byte) ([]Result, error) {
	type dir struct {
		IOPS    float64 `json:"iops"`
		BwBytes float64 `json:"bw_bytes"`
		Clat    struct {
			Percentile map[string]float64 `json:"percentile"`
		} `json:"clat_ns"`
	}
	var r struct {
		Jobs []struct {
			Runtime float64 `json:"job_runtime"` // ms
			Read    dir     `json:"read"`
			Write   dir     `json:"write"`
			Sync    struct {
				Lat struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if i := strings.IndexByte(string(out), '{'); i > 0 { // fio may print notes first
		out = out[i:]
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) == 0 {
		return nil, fmt.Errorf("fio %s: unreadable output: %v", t.Name, err)
	}
	var results []Result
	for _, j := range r.Jobs {
		d := j.Write
		if strings.Contains(t.RW, "read") {
			d = j.Read
		}
		pct := d.Clat.Percentile
		res := Result{Test: t.Name, IOPS: d.IOPS, MBps: d.BwBytes / 1e6, Seconds: j.Runtime / 1000,
			P50Ms: pct["50.000000"] / 1e6, P99Ms: pct["99.000000"] / 1e6}
		if t.Fsync { // a commit's time: the write and its fsync
			res.P50Ms += j.Sync.Lat.Percentile["50.000000"] / 1e6
			res.P99Ms += j.Sync.Lat.Percentile["99.000000"] / 1e6
		}
		results = append(results, res)
	}
	return results, nil
}
