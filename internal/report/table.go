package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// tablePart is a run shown as the rows of its results: a probe's
// endpoints and figures, or any kind the report has no part of its own for.
type tablePart struct {
	plain
	Table *Table
}

func (p *tablePart) finding(r *Run, _ *Run) string {
	if p.Table == nil {
		return fmt.Sprintf("Lab %s, %s (run %s): its results are not rows the report can show; they are kept with the run in the run store.", r.Lab, r.Kind, r.ID)
	}
	return fmt.Sprintf("Lab %s, %s (run %s): its figures are in its table below.", r.Lab, r.Kind, r.ID)
}

// Table is a run's results as rows of text.
type Table struct {
	Columns []string
	Rows    [][]string
}

// table renders a list of flat result objects, the endpoints first.
func table(raw json.RawMessage) *Table {
	var objs []map[string]any
	if json.Unmarshal(raw, &objs) != nil || len(objs) == 0 {
		return nil
	}
	t := &Table{}
	for k := range objs[0] {
		t.Columns = append(t.Columns, k)
	}
	first := map[string]int{"from": 0, "to": 1, "target": 2, "node": 3, "volume": 4, "test": 5}
	sort.Slice(t.Columns, func(i, j int) bool {
		a, aok := first[t.Columns[i]]
		b, bok := first[t.Columns[j]]
		switch {
		case aok && bok:
			return a < b
		case aok != bok:
			return aok
		}
		return t.Columns[i] < t.Columns[j]
	})
	for _, o := range objs {
		var row []string
		for _, c := range t.Columns {
			switch v := o[c].(type) {
			case float64:
				prec := 3
				if v == float64(int64(v)) {
					prec = 0
				}
				row = append(row, strconv.FormatFloat(v, 'f', prec, 64))
			default:
				row = append(row, fmt.Sprint(v))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// tablePage is its section of the page (the run's results, a row each).
const tablePage = `{{with .Part.Table}}
<table>
<tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}
</table>
{{end}}`
