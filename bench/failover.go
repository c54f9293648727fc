package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hadrill/hadrill/internal/lab"
)

// ack is one write of the open-loop writer.
type ack struct {
	id       int
	sent, at time.Time // at: acknowledged (zero when it failed)
}

// failover: kill -9 of the node taking writes through the load balancer,
// under an open-loop writer (a new connection per write), with Galera's
// stock failure detection and with the galera3 preset's fast one.
func failover(bin string, runs int) {
	stock := failoverVariant(bin, runs, "stock")
	fast := failoverVariant(bin, runs, "fast")
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tfailure_detection\truns\tgap median s\tmin s\tmax s\tmissing acked\tratio\t")
	for _, r := range []failoverResult{stock, fast} {
		fmt.Fprintf(w, "failover\t%s\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.2f\t\n", r.detection, runs, median(r.gaps), minf(r.gaps), maxf(r.gaps),
			r.missing, median(r.gaps)/median(fast.gaps))
	}
	w.Flush()
	fmt.Printf("\ntarget (galera3, fast): gap median ≤ 1.000 s: %v; 0 acknowledged writes missing in all runs: %v\n",
		median(fast.gaps) <= 1, stock.missing+fast.missing == 0)
}

type failoverResult struct {
	detection string
	gaps      []float64
	missing   int
}

func failoverVariant(bin string, runs int, detection string) failoverResult {
	spec := tempSpec("clusters:\n  - name: db\n    nodes: 3\n    failure_detection: " + detection +
		"\nload_balancers:\n  - name: lb\n    cluster: db\n")
	name := "bf" + detection
	_, home := scratchLab(bin, name, "-f", spec)
	defer runCleanups()
	l, err := lab.Open(home, name, nil)
	check(err)
	lb := l.Plan.LoadBalancers[0]
	db, err := l.AppDB(fmt.Sprintf("%s:%d", lb.Address, lb.Port))
	check(err)
	db.SetMaxOpenConns(256)
	db.SetMaxIdleConns(0) // every write opens a new connection, as the bench intends
	_, err = db.Exec("CREATE TABLE app.failover (id INT PRIMARY KEY, trial INT, node VARCHAR(8))")
	check(err)

	res := failoverResult{detection: detection}
	for trial := 1; trial <= runs; trial++ {
		victim, pid := activeWriter(bin, home, name)
		acks := writeWhileKilling(db, trial, pid)
		gap, acked, failed := measure(acks, pid)
		run(bin, "--home", home, "start", "--name", name, victim)
		missing := audit(l, acks)
		res.missing += missing
		res.gaps = append(res.gaps, gap.Seconds())
		fmt.Fprintf(os.Stderr, "failover (%s) trial %d/%d: killed %s, gap %.3fs, %d acknowledged, %d failed, %d acknowledged writes missing\n",
			detection, trial, runs, victim, gap.Seconds(), acked, failed, missing)
	}
	return res
}

// killAt marks the kill instant for measure (set by writeWhileKilling).
var killAt time.Time

// activeWriter asks hadrill which node the LB sends writes to.
func activeWriter(bin, home, name string) (string, int) {
	var st lab.Status
	check(json.Unmarshal([]byte(run(bin, "--home", home, "status", "--name", name, "-o", "json")), &st))
	for _, b := range st.LoadBalancers[0].Backends {
		if b.Proxy == "writes" && b.Serving {
			for _, n := range st.Nodes {
				if n.Name == b.Name {
					return n.Name, n.Pid
				}
			}
		}
	}
	fail("no node takes writes: %+v", st.LoadBalancers)
	return "", 0
}

// writeWhileKilling writes every 5 ms for 2 s, kills pid, writes 3 s more.
func writeWhileKilling(db *sql.DB, trial, pid int) []*ack {
	var mu sync.Mutex
	var acks []*ack
	var wg sync.WaitGroup
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	killed := false
	for i := 0; time.Since(start) < 5*time.Second; i++ {
		<-tick.C
		if !killed && time.Since(start) > 2*time.Second {
			killAt = time.Now()
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = true
		}
		a := &ack{id: trial*1_000_000 + i, sent: time.Now()}
		mu.Lock()
		acks = append(acks, a)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := db.ExecContext(ctx, "INSERT INTO app.failover VALUES (?, ?, @@wsrep_node_name)", a.id, trial)
			if err == nil {
				mu.Lock()
				a.at = time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return acks
}

// measure: the gap between the last acknowledgement before the kill and the first after it.
func measure(acks []*ack, _ int) (gap time.Duration, acked, failed int) {
	var before, after time.Time
	for _, a := range acks {
		if a.at.IsZero() {
			failed++
			continue
		}
		acked++
		if a.at.Before(killAt) && a.at.After(before) {
			before = a.at
		}
		if !a.at.Before(killAt) && (after.IsZero() || a.at.Before(after)) {
			after = a.at
		}
	}
	if before.IsZero() || after.IsZero() {
		fail("no acknowledgement on one side of the kill (before %v, after %v)", before, after)
	}
	return after.Sub(before), acked, failed
}

// audit counts acknowledged ids missing on any running node.
func audit(l *lab.Lab, acks []*ack) int {
	missing := 0
	for i := range l.Plan.Nodes {
		n := &l.Plan.Nodes[i]
		db, err := l.AppDB(fmt.Sprintf("%s:%d", n.Address, n.Port))
		check(err)
		have := map[int]bool{}
		rows, err := db.Query("SELECT id FROM app.failover")
		check(err)
		for rows.Next() {
			var id int
			check(rows.Scan(&id))
			have[id] = true
		}
		rows.Close()
		db.Close()
		for _, a := range acks {
			if !a.at.IsZero() && !have[a.id] {
				missing++
				fmt.Fprintf(os.Stderr, "acknowledged write %d missing on %s\n", a.id, n.Name)
			}
		}
	}
	return missing
}
