package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/host/hosttest"
	"github.com/hadrill/hadrill/internal/plan"
)

// logLab is a lab of one load balancer whose log is a file of its host.
type logLab struct {
	Lab
	p *plan.Plan
	h *hosttest.Files
}

func (l logLab) Plan() *plan.Plan      { return l.p }
func (l logLab) Host(string) host.Host { return l.h }

// TestWithBalancers: a failed step's error says what the load balancer
// did while it ran, from a second before it, and stays the error it was.
func TestWithBalancers(t *testing.T) {
	const log = "/lb/proxy.log"
	began := time.Now().Add(-10 * time.Second).UTC()
	stamp := func(d time.Duration) string { return began.Add(d).Format(time.RFC3339Nano) }
	text := stamp(-5*time.Second) + " Server writes/db2 is DOWN, reason: Layer7 timeout, check duration: 1001ms. 2 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.\n" +
		stamp(3*time.Second) + " Server writes/db1 is DOWN, reason: Layer7 wrong status, code: 503, info: \"no answer within 300ms (server hung or overloaded)\", check duration: 301ms. 1 active and 0 backup servers left. 64 sessions active, 0 requeued, 0 remaining in queue.\n"
	l := logLab{h: hosttest.New(map[string]string{log: text}), p: &plan.Plan{LoadBalancers: []plan.LB{{Name: "lb", Instances: []plan.LBInstance{{Host: "lb", LogFile: log}}}}}}
	cause := errors.New("sysbench: exit status 1: FATAL: mysql_drv_query() returned error 2013 (Lost connection to server during query)")
	err := withBalancers(context.Background(), l, cause, began)
	want := cause.Error() + "\nwhile it ran, load balancer lb (times from its start): writes marked db1 down at +3.0 s " +
		"(Layer7 wrong status, code: 503, info: \"no answer within 300ms (server hung or overloaded)\"), shutting its 64 sessions"
	if err.Error() != want || !errors.Is(err, cause) {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	l.p.LoadBalancers[0].Instances[0].LogFile = "/lb/none.log"
	if err := withBalancers(context.Background(), l, cause, began); err != cause || strings.Contains(err.Error(), "while") {
		t.Errorf("no log: %v", err)
	}
}
