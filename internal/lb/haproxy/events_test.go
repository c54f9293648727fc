package haproxy

import (
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
)

// A log as HAProxy writes it with -db and format iso: each event twice,
// once echoed without a time (skipped), once with it.
const sampleLog = `[NOTICE]   (30360) : haproxy version is 2.6.12-1+deb12u4
[WARNING]  (30360) : Server writes/db1 is DOWN, reason: Layer7 wrong status, code: 503, info: "no answer within 300ms (server hung or overloaded). Try later", check duration: 301ms. 2 active and 0 backup servers left. 42 sessions active, 0 requeued, 0 remaining in queue.
2026-11-29T08:41:07.512043+00:00 Server writes/db1 is DOWN, reason: Layer7 wrong status, code: 503, info: "no answer within 300ms (server hung or overloaded). Try later", check duration: 301ms. 2 active and 0 backup servers left. 42 sessions active, 0 requeued, 0 remaining in queue.
2026-11-29T08:41:07.9+00:00 Server reads/db2 is DOWN, reason: Health analyze, info: "Detected 1 consecutive errors, last one was: L4 unsuccessful connection". 1 active and 0 backup servers left. 3 sessions active, 0 requeued, 0 remaining in queue.
2026-11-29T08:41:08.000001+00:00 Server writes/db3 is DOWN, reason: Layer7 timeout, check duration: 1001ms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.
2026-11-29T08:41:08.000002+00:00 proxy writes has no server available!
2026-11-29T08:41:09.250000+00:00 Server writes/db1 is UP, reason: Layer7 check passed, code: 200, check duration: 2ms. 1 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.
2026-11-29T08:41:10+00:00 Server reads/db3 is going DOWN for maintenance. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.
2026-11-29T08:41:11+00:00 Connect from 198.19.86.200:40000 to 198.19.86.101:3306 (writes/TCP)
not a line of its log at all
`

func TestEvents(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := []proxy.Event{
		{At: at("2026-11-29T08:41:07.512043Z"), Proxy: "writes", Server: "db1", What: proxy.Down, Sessions: 42,
			Reason: `Layer7 wrong status, code: 503, info: "no answer within 300ms (server hung or overloaded). Try later"`},
		{At: at("2026-11-29T08:41:07.9Z"), Proxy: "reads", Server: "db2", What: proxy.Down, Sessions: 3,
			Reason: `Health analyze, info: "Detected 1 consecutive errors, last one was: L4 unsuccessful connection"`},
		{At: at("2026-11-29T08:41:08.000001Z"), Proxy: "writes", Server: "db3", What: proxy.Down, Reason: "Layer7 timeout"},
		{At: at("2026-11-29T08:41:08.000002Z"), Proxy: "writes", What: proxy.NoServer},
		{At: at("2026-11-29T08:41:09.25Z"), Proxy: "writes", Server: "db1", What: proxy.Up, Reason: "Layer7 check passed, code: 200"},
		{At: at("2026-11-29T08:41:10Z"), Proxy: "reads", Server: "db3", What: proxy.Down, Reason: "maintenance"},
	}
	got := Events([]byte(sampleLog))
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i].Proxy != want[i].Proxy || got[i].Server != want[i].Server ||
			got[i].What != want[i].What || got[i].Reason != want[i].Reason || got[i].Sessions != want[i].Sessions {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if e := Events(nil); len(e) != 0 {
		t.Errorf("an empty log: %v", e)
	}
}
