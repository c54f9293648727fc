package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/drill/schedule"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/keeper"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
)

// drillKind is the step kind drill: a fault under load, as `hadrill drill SCENARIO --workload append`
// runs it: acknowledged writes through the load balancer and list-append
// transactions from clients on every node, the scale's time of traffic
// before the fault and after the cluster is whole again; its figures are
// the acknowledged-write audit's and the checked history's.
var drillKind = &stepKind{
	name:    "drill",
	metrics: slices.Concat(drillMetrics, chaosMetrics),
	metricsOf: func(st Step) []string {
		if st.Scenario == drill.ChaosDrill {
			return slices.Concat(drillMetrics, chaosMetrics)
		}
		return drillMetrics
	},
	fields: []string{"scenario", "workload", "faults", "hold", "interval"},
	least: func(st Step, sc Scale) time.Duration { // a chaos schedule's own time; other drills last as long as recovery takes
		if st.Scenario != drill.ChaosDrill {
			return 0
		}
		return time.Duration(2*sc.Time+sc.Duration) * time.Second
	},
	step: func(st Step, add func(string, string, ...any)) {
		if st.Scenario == drill.ChaosDrill {
			if _, err := chaosParams(st, 0, 60); err != nil {
				var u *hderr.UserError
				if errors.As(err, &u) {
					for _, p := range u.Problems {
						if !strings.HasPrefix(p, "--duration") {
							field, rest, _ := strings.Cut(strings.TrimPrefix(p, "--"), ": ")
							add(field, "%s", rest)
						}
					}
				} else {
					add("faults", "%v", err)
				}
			}
		} else {
			for f, v := range map[string]string{"faults": st.Faults, "hold": st.Hold, "interval": st.Interval} {
				if v != "" {
					add(f, "applies to scenario chaos only")
				}
			}
		}
		if _, ok := drill.Lookup(st.Scenario); !ok {
			add("scenario", "expected a drill (%s), got %q", strings.Join(drillNames(), ", "), st.Scenario)
		} else if !slices.Contains(studyDrills, st.Scenario) {
			add("scenario", "a study runs the drills that need no target named (%s), got %q", strings.Join(studyDrills, ", "), st.Scenario)
		}
		if st.Workload != "" && !slices.Contains(drill.Workloads, st.Workload) {
			add("workload", "expected one of %s, got %q", strings.Join(drill.Workloads, ", "), st.Workload)
		}
	},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if sc.Time < 1 || sc.Time > 3600 {
			add("time", "expected 1 to 3600 seconds of traffic before the fault and after recovery (step %s), got %d", st.Name, sc.Time)
		}
		switch {
		case st.Scenario == drill.ChaosDrill && (sc.Duration < 10 || sc.Duration > 86400):
			add("duration", "expected 10 to 86400 seconds of fault schedule a round (step %s), got %d", st.Name, sc.Duration)
		case st.Scenario != drill.ChaosDrill && sc.Duration != 0:
			add("duration", "applies to a drill step of scenario chaos only (step %s)", st.Name)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		l, ok := m.lab.(drill.Lab)
		if !ok {
			return nil, errors.New("a drill step needs a lab of hadrill's own")
		}
		wl := m.step.Workload
		if wl == "" {
			wl = workload.HistoryName("") // the default history workload
		}
		t := time.Duration(m.scale.Time) * time.Second
		// read-committed: the drill passes unless it lost acknowledged
		// work or shows what no isolation level allows; every anomaly
		// found is counted whatever the model
		o := drill.Options{Scenario: m.step.Scenario, Workload: wl, Model: "read-committed", Rate: 100,
			Before: t, After: t, Hold: 30 * time.Second, Timeout: 90 * time.Second, Command: m.opts.Command}
		if m.step.Scenario == drill.ChaosDrill {
			p, err := chaosParams(m.step, chaosSeed(m.study, m.step.Name, m.round), m.scale.Duration)
			if err != nil {
				return nil, err
			}
			o.Chaos = &drill.Chaos{Params: p, SeedGiven: true}
		}
		// the drill's messages and the lab's while it runs (the repair
		// before it, a heal's restarts) are kept in its run: drill.log
		var log bytes.Buffer // written only while the drill runs
		o.Log = keeper.Stamped(&log)
		stop := m.log.into(o.Log)
		defer stop()
		// a round starts from a whole cluster: a drill before it may have
		// left a node out (it said so in its own verdict); made whole
		// here, and counted
		repaired, err := drill.MakeWhole(ctx, l, 90*time.Second)
		if err != nil {
			return nil, err
		}
		res, err := drill.Run(ctx, l, o)
		stop()
		if res == nil {
			return nil, err
		}
		if res.RunID != "" {
			if werr := os.WriteFile(filepath.Join(results.RunDir(m.opts.Home, res.RunID), drill.LogFile), log.Bytes(), 0o644); werr != nil && err == nil {
				err = werr
			}
		}
		if res.Interrupted {
			return nil, fmt.Errorf("drill %s interrupted", m.step.Scenario)
		}
		passed := 0.0
		if res.Passed {
			passed = 1
		}
		out := []any{"lost_writes", float64(res.LostCount), "gap_s", res.Gap.Seconds, "passed", passed, "recovered_by_hand", float64(len(res.Interventions)),
			"repaired_before", float64(min(len(repaired), 1))}
		lostAny := 0.0
		if res.LostCount > 0 || res.Consistency != nil && res.Consistency.Count("lost") > 0 {
			lostAny = 1
		}
		out = append(out, "lost_any", lostAny, "reversals", float64(len(res.Reversals)), "semi_sync_fallbacks", float64(len(res.SemiSyncFallbacks)))
		if m.step.Scenario == drill.ChaosDrill {
			// the schedule's hours, from its first fault to its last heal
			h := float64(m.scale.Duration) / 3600
			if n := len(res.Applied); n > 0 {
				h = max(res.Applied[n-1].HealedS, 1) / 3600
			}
			late := 0.0
			for _, a := range res.Applied {
				if a.LateS > 0 {
					late++
				}
			}
			out = append(out, Exposure, h, lossRate, lostAny/h, "steps_late", late)
		}
		if c := res.Consistency; c != nil {
			out = append(out, "lost_appends", float64(c.Count("lost")), "lost_updates", float64(c.Count("lost-update")),
				"stale_reads", float64(c.Count("G-single-realtime")), "cycles", float64(c.Count(consistency.DataCycles...)),
				"committed_appends", float64(c.OK), "unknown_appends", float64(c.Info))
		}
		return samples(m.step, res.RunID, out...), nil
	},
	describe: func(st Step, metric string) string {
		what := map[string]string{
			"lost_writes":         "Acknowledged writes lost",
			"gap_s":               "Seconds the clients saw no acknowledged write",
			"lost_appends":        "Acknowledged appends no later read saw",
			"lost_any":            "Drills that lost acknowledged work (1) or not (0)",
			"lost_updates":        "Lost updates (P4)",
			"stale_reads":         "Stale reads (G-single through real time)",
			"cycles":              "Dependency cycles without real-time or process order",
			"committed_appends":   "List-append transactions committed",
			"unknown_appends":     "List-append transactions of unknown outcome",
			"passed":              "Drills passed (1) or not (0): nothing acknowledged lost, nothing read committed forbids",
			"recovered_by_hand":   "Times the cluster had to be recovered by hand: a primary component given back (hadrill recover), or made whole after a heal that failed",
			"repaired_before":     "Rounds that found the cluster not whole and had to make it whole first (the drill before left a node out)",
			"reversals":           "Times a member left because the primary component it rejoined had applied fewer write sets than it had (Galera: \"Reversing history … Data loss is possible\")",
			"semi_sync_fallbacks": "Times a semi-sync primary went on committing without a replica's acknowledgement (its timeout passed): what it acknowledged then was on it alone",
			Exposure:              "Hours of the fault schedule, its first fault to its last heal",
			lossRate:              "Rounds that lost acknowledged work an hour of faults (a round counts once: a floor of the rate of losses)",
			"steps_late":          "Steps of the schedule that began over 0.1 s late (the step before took longer to recover)",
		}[metric]
		return fmt.Sprintf("%s, drill %s with list-append transactions from every node", what, st.Scenario)
	},
}

// studyDrills are the drills a study step runs: those that need no target
// named (the whole cluster, or the load balancer's writer by default).
var studyDrills = []string{"failover", "partition", "pause", "crash-partition", "full-outage", "rolling-restart", drill.ChaosDrill}

// drillMetrics are every drill step's figures; chaosMetrics a chaos
// step's besides.
var (
	drillMetrics = []string{"lost_writes", "gap_s", "lost_appends", "lost_any", "lost_updates", "stale_reads", "cycles",
		"committed_appends", "unknown_appends", "passed", "recovered_by_hand", "repaired_before", "reversals", "semi_sync_fallbacks"}
	chaosMetrics = []string{Exposure, lossRate, "steps_late"}
)

// lossRate is a chaos step's rate of losses (RateSuffix: judged by
// Garwood's interval over the rounds' hours, Exposure).
const lossRate = "losses" + RateSuffix

// chaosParams is a chaos step's schedule parameters: its faults (default
// the drill's own), hold and interval, the scale's duration; seed decides
// the draw (every problem at once, as the drill's flags name them).
func chaosParams(st Step, seed uint64, duration int) (schedule.Params, error) {
	p := schedule.Params{Seed: seed, Faults: schedule.Default, Duration: time.Duration(duration) * time.Second,
		Hold: 10 * time.Second, Interval: 5 * time.Second}
	var problems []string
	if st.Faults != "" {
		p.Faults = strings.Split(st.Faults, ",")
	}
	for _, d := range []struct {
		field, text string
		into        *time.Duration
	}{{"hold", st.Hold, &p.Hold}, {"interval", st.Interval, &p.Interval}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--%s: expected a duration (10s, 1m), got %q", d.field, d.text))
			continue
		}
		*d.into = v
	}
	var u *hderr.UserError
	if err := p.Check(); errors.As(err, &u) {
		problems = append(problems, u.Problems...)
	}
	if len(problems) > 0 {
		return p, hderr.Users(problems)
	}
	return p, nil
}

// chaosSeed is a chaos step's seed in a round: the same for every variant
// of the round (their schedules are the same, so they are compared on the
// same faults) and another each round.
func chaosSeed(study, step string, round int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", study, step, round)
	return h.Sum64()
}

func drillNames() []string {
	var out []string
	for _, s := range drill.Scenarios() {
		out = append(out, s.Name)
	}
	return out
}
