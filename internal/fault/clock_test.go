package fault

import (
	"reflect"
	"testing"
	"time"
)

func TestClockSpans(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	recs := []Record{
		{At: at(0), Fault: Clock, Targets: []string{"db2"}, Value: "+1m0s"},
		{At: at(10), Fault: Kill, Targets: []string{"db1"}},
		{At: at(20), Fault: Clock, Targets: []string{"db2"}, Value: "-30s"}, // ends the first, opens another
		{At: at(30), Fault: Clock, Targets: []string{"db3"}, Value: "drift +500ppm"},
		{At: at(40), Fault: Heal}, // ends both
		{At: at(50), Fault: Clock, Targets: []string{"db1"}, Value: "+0s"}, // the real time: no span
		{At: at(60), Fault: Clock, Targets: []string{"db1"}, Value: "+1h0m0s"},
	}
	got := ClockSpans(recs)
	want := []ClockSpan{
		{Node: "db2", Clock: "+1m0s", From: at(0), To: at(20)},
		{Node: "db2", Clock: "-30s", From: at(20), To: at(40)},
		{Node: "db3", Clock: "drift +500ppm", From: at(30), To: at(40)},
		{Node: "db1", Clock: "+1h0m0s", From: at(60)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spans\n%+v\nwant\n%+v", got, want)
	}
	for _, c := range []struct {
		span     ClockSpan
		from, to int
		want     bool
	}{
		{want[0], 5, 8, true}, {want[0], -10, 0, true}, {want[0], 20, 30, true}, {want[0], 21, 30, false}, {want[0], -10, -1, false},
		{want[3], 100, 200, true}, {want[3], 0, 59, false},
	} {
		if got := c.span.Overlaps(at(c.from), at(c.to)); got != c.want {
			t.Errorf("%+v over %d..%d: %v, want %v", c.span, c.from, c.to, got, c.want)
		}
	}
}
