// Package results is the run store: <home>/runs/<id>/run.json with what was
// measured and everything needed to judge it (topology, configs, versions,
// host facts, command line), plus CSV time series beside it.
package results

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

// Kind is what a run measured.
type Kind string

// The kinds of run.
const (
	Sysbench        Kind = "sysbench"
	Slap            Kind = "slap"
	CommitLatency   Kind = "commit-latency"
	Visibility      Kind = "visibility"
	BulkReplication Kind = "bulk-replication"
	SemiSyncReceipt Kind = "semisync-receipt"
	DonorProbe      Kind = "donor-probe"
	Conflict        Kind = "conflict"
	Consistency     Kind = "consistency"
	Drill           Kind = "drill"
	DiskBench       Kind = "disk"
	TPCC            Kind = "tpcc"
)

// Run is one benchmark or drill.
type Run struct {
	ID          string            `json:"run_id"`
	Kind        Kind              `json:"kind"`
	Lab         string            `json:"lab"`
	Started     time.Time         `json:"started"`
	Finished    time.Time         `json:"finished"`
	Command     []string          `json:"command"`
	Interrupted bool              `json:"interrupted"`        // stopped early (Ctrl-C): results are partial
	Warnings    []string          `json:"warnings,omitempty"` // what makes the results doubtful
	Params      any               `json:"params"`
	Topology    any               `json:"topology,omitempty"`
	Configs     map[string]string `json:"configs,omitempty"` // rendered configs by file name
	Versions    map[string]string `json:"versions,omitempty"`
	Host        map[string]string `json:"host,omitempty"`
	Results     json.RawMessage   `json:"results"`
	// Faults injected into the lab while the run ran (hadrill fault ...).
	Faults any `json:"faults,omitempty"`
	// WAN is every emulated link's round trip, measured just before the run.
	WAN any `json:"wan,omitempty"`
	// Disks is every emulated volume as last measured against its class
	// (at up or start; measuring before each run would spend burst credits
	// and fill host caches the run should find as they were).
	Disks any `json:"disks_measured,omitempty"`
	// Hosts is each measured host over the run (CPU, memory, memory-limit
	// kills) beside its machine's caps; hosts.csv has the per-second samples.
	Hosts any `json:"hosts,omitempty"`
	// Monitoring is how scraping the lab's exporters went (a lab with
	// monitoring on); exporters.txt.gz has what they served, every second.
	Monitoring any `json:"monitoring,omitempty"`
}

// Dir is where runs live.
func Dir(home string) string { return filepath.Join(home, "runs") }

// NewID is sortable by time and unique: 20261122-043512-a1b2.
func NewID(now time.Time) string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// RunDir is a run's directory.
func RunDir(home, id string) string { return filepath.Join(Dir(home), id) }

// Save writes run.json atomically.
func Save(home string, r *Run) error {
	dir := RunDir(home, r.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "run.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "run.json"))
}

// Load reads a run; an unknown id, or one that is not a run id (a path),
// is bad input naming the known ones.
func Load(home, id string) (*Run, error) {
	if !validID(id) {
		return nil, hderr.User("RUN_ID: %q is not a run id (like 20261122-043512-a1b2; see `hadrill runs list`)", id)
	}
	b, err := os.ReadFile(filepath.Join(RunDir(home, id), "run.json"))
	if errors.Is(err, os.ErrNotExist) {
		ids := List(home)
		if len(ids) > 5 {
			ids = ids[len(ids)-5:]
		}
		return nil, hderr.User("RUN_ID: no run %q in %s (latest: %v; see `hadrill runs list`)", id, Dir(home), ids)
	}
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, hderr.User("RUN_ID: run %s: its run.json is damaged (%v)", id, err)
	}
	switch {
	case r.ID == "" || r.Kind == "" || r.Started.IsZero():
		return nil, hderr.User("RUN_ID: run %s: its run.json is damaged (no run id, kind or start in it)", id)
	case r.ID != id:
		return nil, hderr.User("RUN_ID: run %s: its run.json names another run, %q (a directory moved or copied by hand)", id, r.ID)
	}
	return &r, nil
}

// Seconds is how long the run took, and false when its record cannot say
// (a finish before the start, or none).
func (r *Run) Seconds() (float64, bool) {
	d := r.Finished.Sub(r.Started).Seconds()
	return d, !r.Finished.IsZero() && d >= 0
}

// validID: a run id names a directory of the run store, never a path.
func validID(id string) bool {
	if id == "" || id == "." || id == ".." || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// List returns run ids, oldest first.
func List(home string) []string {
	entries, _ := os.ReadDir(Dir(home))
	var ids []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(Dir(home), e.Name(), "run.json")); err == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids
}

// WriteCSV writes a time series (header + rows) into the run's directory.
func WriteCSV(home, id, name string, header []string, rows [][]string) error {
	path := filepath.Join(RunDir(home, id), name)
	f, err := os.Create(path + ".tmp") // whole or not at all: a reader (or a kill) never meets half a file
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	_ = w.WriteAll(rows)
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		os.Remove(path + ".tmp")
		return err
	}
	return os.Rename(path+".tmp", path)
}

// ReadCSV reads a run's CSV file back: its rows without the header. A
// missing or unreadable file reads as no rows (older runs lack some files).
func ReadCSV(home, id, name string) [][]string {
	f, err := os.Open(filepath.Join(RunDir(home, id), name))
	if err != nil {
		return nil
	}
	defer f.Close()
	rows, _ := csv.NewReader(f).ReadAll()
	if len(rows) == 0 {
		return nil
	}
	return rows[1:]
}
