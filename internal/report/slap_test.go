package report

import (
	"testing"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/slap"
)

// TestSlapFinding: a slap run's finding says its best concurrency and its
// lowest beside it, says first that its timings are doubtful when
// mariadb-slap reported errors, and says when no concurrency finished.
func TestSlapFinding(t *testing.T) {
	pts := []slap.Point{{Concurrency: 10, AvgS: 0.5, QueriesPerClient: 50, QPS: 1000}, {Concurrency: 1, AvgS: 0.1, QueriesPerClient: 50, QPS: 500}, {Concurrency: 50, AvgS: 3, QueriesPerClient: 50, QPS: 833.3}}
	run := &Run{Run: &results.Run{ID: "s1", Lab: "lab"}}
	for _, c := range []struct {
		part *slapPart
		want string
	}{
		{&slapPart{Points: pts}, "mariadb-slap, lab lab (run s1): 1,000 queries a second at most, with 10 clients (each client's 50 queries in 0.500 s on average); 500 with 1 client (0.100 s)."},
		{&slapPart{Points: pts[1:2]}, "mariadb-slap, lab lab (run s1): 500 queries a second at most, with 1 client (each client's 50 queries in 0.100 s on average)."},
		{&slapPart{Points: pts[:1], Doubt: "Error when connecting to server: 2003"}, "mariadb-slap, lab lab (run s1): its timings are not to be trusted, mariadb-slap reported errors (Error when connecting to server: 2003); 1,000 queries a second at most, with 10 clients (each client's 50 queries in 0.500 s on average)."},
		{&slapPart{}, "mariadb-slap, lab lab (run s1): no concurrency finished."},
	} {
		if got := c.part.finding(run, nil); got != c.want {
			t.Errorf("finding:\n got %s\nwant %s", got, c.want)
		}
	}
}
