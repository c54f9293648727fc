package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/golden"
)

func TestParseText(t *testing.T) {
	types, samples, bad := ParseText(`# HELP up Whether it answered.
# TYPE up gauge
up 1
# TYPE http_requests_total counter
http_requests_total{code="200",path="/a \"b\"\\c\nd"} 1027 1395066363000
http_requests_total{code="500",} 3
weird +Inf
weirder NaN
broken{code="200" 1
no_value
`)
	if types["up"] != "gauge" || types["http_requests_total"] != "counter" {
		t.Errorf("types %v", types)
	}
	if bad != 2 || len(samples) != 5 {
		t.Fatalf("%d samples, %d bad: %+v", len(samples), bad, samples)
	}
	if s := samples[1]; s.Name != "http_requests_total" || s.Value != 1027 || len(s.Labels) != 2 || s.Labels[1].Value != "/a \"b\"\\c\nd" {
		t.Errorf("labelled sample: %+v", s)
	}
	if s := samples[2]; len(s.Labels) != 1 || s.Value != 3 {
		t.Errorf("trailing comma: %+v", s)
	}
	if !math.IsInf(samples[3].Value, 1) || !math.IsNaN(samples[4].Value) {
		t.Errorf("special values: %+v %+v", samples[3], samples[4])
	}
}

// scrapes is a scrape file of two exporters over three seconds, one scrape
// failed and one repeated out of order.
func scrapes(t *testing.T) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	t0 := time.UnixMilli(1764090000000)
	body := func(paused, queue float64) []byte {
		return []byte(fmt.Sprintf(`# TYPE mysql_global_status_wsrep_flow_control_paused_ns untyped
mysql_global_status_wsrep_flow_control_paused_ns %g
# TYPE mysql_global_status_wsrep_local_recv_queue untyped
mysql_global_status_wsrep_local_recv_queue %g
# TYPE mysql_up gauge
mysql_up 1
# TYPE mysql_global_status_commands_total counter
mysql_global_status_commands_total{command="select"} 10
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0.0001
go_gc_duration_seconds_sum 0.5
go_gc_duration_seconds_count 7
`, paused, queue))
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(writeScrape(&b, "mysqld", "db1", t0, body(0, 0), nil))
	must(writeScrape(&b, "mysqld", "db2", t0, body(0, 3), nil))
	must(writeScrape(&b, "mysqld", "db1", t0.Add(time.Second), body(250e6, 5), nil))
	must(writeScrape(&b, "mysqld", "db2", t0.Add(time.Second), nil, errors.New("dial tcp: connection refused\nagain")))
	must(writeScrape(&b, "mysqld", "db1", t0.Add(2*time.Second), body(1250e6, 2), nil))
	must(writeScrape(&b, "mysqld", "db1", t0.Add(time.Second), body(9, 9), nil)) // out of order: dropped
	must(writeScrape(&b, "node", "db1", t0, []byte("# TYPE node_load1 gauge\nnode_load1 0.5"), nil))
	return &b
}

func TestWriteOpenMetrics(t *testing.T) {
	var out bytes.Buffer
	n, err := WriteOpenMetrics(scrapes(t), &out, []Label{{"hadrill_run", "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3*7+7+1 { // db1 thrice, db2 once (its second scrape failed), node once
		t.Errorf("%d samples written", n)
	}
	golden.Check(t, "openmetrics", out.Bytes())
	// a counter ending in _total is a counter family without it; the parts
	// of a summary are families of unknown type; the file ends with # EOF
	for _, want := range []string{"# TYPE mysql_global_status_commands counter\n", "# TYPE go_gc_duration_seconds_count unknown\n", "# TYPE mysql_up gauge\n", "\n# EOF\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestRateAndGauge(t *testing.T) {
	t0 := time.UnixMilli(1764090000000)
	rate, err := Rate(scrapes(t), "mysqld", "mysql_global_status_wsrep_flow_control_paused_ns", t0)
	if err != nil {
		t.Fatal(err)
	}
	// db1: 250 ms then 1,000 ms paused per second; db2's second scrape failed
	if fmt.Sprint(rate) != "[{db1 [[1 2.5e+08] [2 1e+09]]} {db2 []}]" {
		t.Errorf("rate: %v", rate)
	}
	g, _ := Gauge(scrapes(t), "mysqld", "mysql_global_status_wsrep_local_recv_queue", t0)
	if fmt.Sprint(g) != "[{db1 [[0 0] [1 5] [2 2]]} {db2 [[0 3]]}]" {
		t.Errorf("gauge: %v", g)
	}
}

func TestReadScrapesHeader(t *testing.T) {
	err := ReadScrapes(strings.NewReader("# hadrill scrape job=x t=1\n"), func(Scrape) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "expected instance=") {
		t.Errorf("bad header: %v", err)
	}
	var got []Scrape
	_ = ReadScrapes(scrapes(t), func(s Scrape) error { got = append(got, s); return nil })
	if len(got) != 7 || got[3].Err != "dial tcp: connection refused again" || len(got[3].Samples) != 0 {
		t.Errorf("failed scrape: %+v", got[3])
	}
}
