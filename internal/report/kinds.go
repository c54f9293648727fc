package report

import (
	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/results"
)

// A runKind is what the report makes of one kind of stored run: how it
// reads what the run stored into the run's part, the charts drawn over
// every run of the kind at once (nil: none), and its section of the page
// (a template over the Run, its part in .Part; "": none).
type runKind struct {
	kind     results.Kind
	read     func(home string, r *results.Run) part
	together func(runs []Run, label map[string]string) []chart.Chart
	page     string
}

// kinds are the kinds of run the report shows in their own way, in the
// order their shared charts come. Any other kind (a probe's rows:
// visibility, bulk replication, conflicts, and any kind
// to come) is shown as a table of its results. A new kind: its part, read and page in a file of its own,
// and its entry here.
var kinds = []runKind{
	{kind: results.Sysbench, read: readSweep, together: sweepCharts, page: sweepPage},
	{kind: results.TPCC, read: readTPCC, together: tpmcCharts, page: tpccPage},
	{kind: results.CommitLatency, read: readCommits, page: commitsPage},
	{kind: results.Consistency, read: readCheck, page: checkPage},
	{kind: results.Drill, read: readDrill, page: drillPage},
	{kind: results.SemiSyncReceipt, read: readProbe("Semi-sync receipt", receiptSays), page: tablePage},
	{kind: results.DonorProbe, read: readProbe("Donor probe", donorSays), page: tablePage},
	{kind: results.DiskBench, read: readDisk, page: diskPage},
	{kind: results.Slap, read: readSlap, together: slapCharts, page: slapPage},
}

// tableKind shows any kind not in kinds.
var tableKind = runKind{read: func(_ string, r *results.Run) part { return &tablePart{Table: table(r.Results)} }, page: tablePage}

// kindOf is what the report makes of a kind of run.
func kindOf(k results.Kind) runKind {
	for _, rk := range kinds {
		if rk.kind == k {
			return rk
		}
	}
	return tableKind
}

// A part is what one kind of run shows of itself: what it found, its
// title, its own charts and marks on its time axis.
type part interface {
	// finding says what the run found, in a sentence or a few. first is
	// the report's first run of the same kind when that is another run
	// (nil otherwise): a run is set against it.
	finding(r *Run, first *Run) string
	// title names the run in legends and headings ("": by its kind).
	title(r *Run) string
	// markers are the faults and events to mark on its time axis.
	markers(r *Run) []chart.Marker
	// charts are the run's own charts (label names it).
	charts(r *Run, label string) []chart.Chart
}

// against is a part set against the first run of its kind (a TPC-C run's
// change at each client count).
type against interface{ against(first part) }

// plain is what a part does not say: embedded by parts for the methods
// they leave out.
type plain struct{}

func (plain) title(*Run) string                 { return "" }
func (plain) markers(r *Run) []chart.Marker     { return nil }
func (plain) charts(*Run, string) []chart.Chart { return nil }
func (plain) finding(r *Run, _ *Run) string     { return "" }

// pageName is the name of a kind's section among the page's templates.
func (k runKind) pageName() string { return "kind " + string(k.kind) }

// KindNames are the kinds of run the report shows in their own way, in
// their order.
func KindNames() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, string(k.kind))
	}
	return out
}
