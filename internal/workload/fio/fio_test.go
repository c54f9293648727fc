package fio

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestArgv(t *testing.T) {
	rand, _ := Named("randwrite")
	got := strings.Join(Argv(rand, "/v/data/hd", 10*time.Second), " ")
	for _, want := range []string{"--rw=randwrite", "--bs=16384", "--direct=1", "--iodepth=16", "--filename=/v/data/hd/work", "--runtime=10000ms", "--time_based"} {
		if !strings.Contains(got, want) {
			t.Errorf("randwrite: %q lacks %s", got, want)
		}
	}
	file, _ := Named("file1g")
	got = strings.Join(Argv(file, "/d", time.Second), " ")
	if !strings.Contains(got, "--size=1073741824") || !strings.Contains(got, "--end_fsync=1") || !strings.Contains(got, "--fallocate=none") || strings.Contains(got, "time_based") || strings.Contains(got, "direct") {
		t.Errorf("file1g writes one whole file through the page cache and flushes it: %q", got)
	}
	sync, _ := Named("fsync")
	if got := strings.Join(Argv(sync, "/d", time.Second), " "); !strings.Contains(got, "--fsync=1") {
		t.Errorf("fsync: %q", got)
	}
	if _, ok := Named("nope"); ok || !slices.Contains(Names(), "latency") {
		t.Error("Named/Names")
	}
}

func TestParse(t *testing.T) {
	b, err := os.ReadFile("testdata/fsync.json")
	if err != nil {
		t.Fatal(err)
	}
	sync, _ := Named("fsync")
	r, err := Parse(sync, append([]byte("note: a line fio prints first\n"), b...))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.IOPS-124.94) > 0.01 || r.Seconds != 2 || math.Abs(r.P50Ms-8.0038) > 0.001 {
		t.Errorf("parsed %+v, want 124.94 IOPS over 2 s, p50 8.004 ms (the write's 0.041 ms and its fsync's 7.963 ms)", r)
	}
	if _, err := Parse(sync, []byte("fio: no such file")); err == nil {
		t.Error("unreadable output accepted")
	}
}
