package report

import (
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"math"
	"strings"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
)

// diskTolerance is how far a figure may stray from its class's promise
// and still keep it: a tenth, as the disk check at `up` allows.
const diskTolerance = 0.10

// diskPart is a disk benchmark's run: each volume's tests against what
// its class promises.
type diskPart struct {
	plain
	Rows   []diskRow
	Params workload.DiskParams
}

// diskRow is one test on one volume with its figure against the promise.
type diskRow struct {
	workload.DiskResult
	workload.DiskPromise
}

// ShortOf and BeyondOf say the row strays from its promise (the page's
// marks).
func (r diskRow) ShortOf() bool  { return r.DiskPromise.Short(diskTolerance) }
func (r diskRow) BeyondOf() bool { return r.DiskPromise.Beyond(diskTolerance) }

func readDisk(_ string, r *results.Run) part {
	p := &diskPart{}
	var res []workload.DiskResult
	_ = json.Unmarshal(r.Results, &res)
	for _, d := range res {
		p.Rows = append(p.Rows, diskRow{d, d.Promise()})
	}
	if b, err := json.Marshal(r.Params); err == nil {
		_ = json.Unmarshal(b, &p.Params)
	}
	return p
}

// finding says how many tests kept their class's promise, how many fell
// short or beat it, and the one furthest short.
func (p *diskPart) finding(r *Run, _ *Run) string {
	if len(p.Rows) == 0 {
		return fmt.Sprintf("Disk tests, lab %s (run %s): no test finished.", r.Lab, r.ID)
	}
	volumes := map[string]bool{}
	promised, kept, beyond := 0, 0, 0
	var worst *diskRow
	for i := range p.Rows {
		d := &p.Rows[i]
		volumes[d.Node+"/"+d.Volume] = true
		switch {
		case d.Promised == "":
			continue
		case d.ShortOf():
			if worst == nil || strays(*d) > strays(*worst) {
				worst = d
			}
		case d.BeyondOf():
			beyond++
		default:
			kept++
		}
		promised++
	}
	s := fmt.Sprintf("Disk tests, lab %s (run %s): %s on %s", r.Lab, r.ID, words.Count(len(p.Rows), "test"), words.Count(len(volumes), "volume"))
	if p.Params.Runs > 1 {
		s += fmt.Sprintf(" (the median of %d runs each)", p.Params.Runs)
	}
	if promised == 0 {
		return s + "; no volume's class promises a figure for them."
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("%d of %d within %.0f %% of their class's promise", kept, promised, 100*diskTolerance))
	if worst != nil {
		parts = append(parts, fmt.Sprintf("%d short of it", promised-kept-beyond))
	}
	if beyond > 0 {
		parts = append(parts, fmt.Sprintf("%d beyond it (host caching and bursts can beat a promise)", beyond))
	}
	s += "; " + strings.Join(parts, ", ")
	if worst != nil {
		s += fmt.Sprintf("; the furthest short: %s/%s %s, %s against the %s promised (%.2f×)", worst.Node, worst.Volume, worst.Test, worst.Measured, worst.Promised, worst.Ratio)
	}
	return s + "."
}

// strays is how far a figure is from its promise, whichever way.
func strays(d diskRow) float64 {
	if d.Ratio <= 0 {
		return math.Inf(1)
	}
	return math.Abs(math.Log(d.Ratio))
}

// diskPage is its section of the page (each test's figures against its
// class's promise, a stray one marked).
const diskPage = `{{with .Part.Rows}}
<table>
<tr><th class="l">node</th><th class="l">volume</th><th class="l">test</th><th>IOPS</th><th>MB/s</th><th>p50 ms</th><th>p99 ms</th><th>seconds</th><th>class promises</th><th>measured / promised</th></tr>
{{range .}}<tr><td class="l">{{.Node}}</td><td class="l">{{.Volume}}</td><td class="l">{{.Test}}</td><td>{{printf "%.0f" .IOPS}}</td><td>{{f1 .MBps}}</td><td>{{f2 .P50Ms}}</td><td>{{f2 .P99Ms}}</td><td>{{f1 .Seconds}}</td><td>{{if .Promised}}{{.Promised}}{{else}}-{{end}}</td><td>{{if .Promised}}{{if .ShortOf}}<span class="warn">{{f2 .Ratio}}× (short)</span>{{else if .BeyondOf}}{{f2 .Ratio}}× (beyond){{else}}{{f2 .Ratio}}×{{end}}{{else}}-{{end}}</td></tr>
{{end}}
</table>
{{end}}`
