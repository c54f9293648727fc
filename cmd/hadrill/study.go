package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/study"
)

func (cli *app) studyCmd() *cobra.Command {
	c := &cobra.Command{Use: "study", Short: "Reproduce a published experiment: its set-ups, load and figures, reported beside the document's"}
	c.AddCommand(cli.studyListCmd(), cli.studyShowCmd(), cli.studyRunCmd(), cli.studyReportCmd(), cli.studyTallyCmd())
	return c
}

// loadStudy is the study a command names: the embedded one by its name,
// or the file given with --file (a credentials file it names is found
// beside it).
func loadStudy(file string, args []string) (*study.Study, error) {
	if file != "" {
		if len(args) > 0 {
			return nil, hderr.User("NAME: give a study name or --file, not both")
		}
		b, err := readBounded("--file", file, "a study")
		if err != nil {
			return nil, err
		}
		s, err := study.Load(b)
		if err != nil {
			return nil, err
		}
		for i, v := range s.Variants { // an endpoint's credentials file is found beside the study file
			if v.Credentials != "" && !filepath.IsAbs(v.Credentials) {
				s.Variants[i].Credentials = filepath.Join(filepath.Dir(file), v.Credentials)
			}
		}
		return s, nil
	}
	if len(args) != 1 {
		return nil, hderr.User("NAME: expected a study name (known: %s) or --file", strings.Join(study.Names(), ", "))
	}
	return study.Embedded(args[0])
}

func (cli *app) studyListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List the embedded studies", Args: args(0, 0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			type listed struct {
				*study.Study
				OnHosts []string `json:"on_hosts_refused,omitempty"` // why it cannot run on remote hosts
			}
			var all []listed
			for _, n := range study.Names() {
				s, err := study.Embedded(n)
				if err != nil {
					return err
				}
				all = append(all, listed{s, s.OnHosts()})
			}
			return cli.emit(all, func() {
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "STUDY\tVARIANTS\tTITLE\tSTATUS\tON YOUR MACHINES")
				for _, s := range all {
					status, hosts := "runs", "runs"
					if s.Needs != "" {
						status = "needs " + s.Needs
					}
					if len(s.OnHosts) > 0 {
						hosts = "no (below)"
					}
					fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", s.Name, len(s.Variants), s.Title, status, hosts)
				}
				w.Flush()
				fmt.Println("\nOn your own machines (study run --inventory), machines, disks and NICs are the hosts' own:")
				for _, s := range all {
					for _, p := range s.OnHosts {
						fmt.Printf("  %s: %s\n", s.Name, p)
					}
				}
			})
		},
	}
}

func (cli *app) studyShowCmd() *cobra.Command {
	var file string
	show := &cobra.Command{
		Use: "show NAME | --file FILE", Short: "Print a study (the embedded one's YAML, or the file's after checking it)", Args: args(0, 1, "a study name"),
		RunE: func(_ *cobra.Command, a []string) error {
			s, err := loadStudy(file, a)
			if err != nil {
				return err
			}
			if file == "" && cli.output != "json" {
				src, _ := study.Source(s.Name)
				_, err := os.Stdout.Write(src)
				return err
			}
			return cli.emit(s, func() { fmt.Printf("%s: %s (%d variants, %d steps)\n", s.Name, s.Title, len(s.Variants), len(s.Steps)) })
		},
	}
	show.Flags().StringVar(&file, "file", "", "a study file of your own")
	return show
}

func (cli *app) studyRunCmd() *cobra.Command {
	var file string
	var o study.Options
	var runFlags studyRunFlags
	run := &cobra.Command{
		Use:   "run NAME | --file FILE | --resume RUN [--scale quick|full] [--variants a,b] [--decide [--budget D]] [--inventory HOSTS.yaml] [--dry-run]",
		Short: "Run a study: every variant's lab up, the rounds interleaved, a summary beside the published figures; the labs removed after",
		Long:  studyRunLong,
		Args:  args(0, 1, "a study name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if runFlags.resume != "" {
				prev, err := cli.resumed(runFlags.resume)
				if err != nil { // with the flags' own problems: every problem at once
					return hderr.Join([]error{err, runFlags.problems(cmd, &o)})
				}
				if file == "" && len(a) == 0 { // the stopped run's study
					a = []string{prev.Result.Study.Name}
				}
				resumeDefaults(cmd, &o, prev)
			}
			s, err := loadStudy(file, a)
			err = hderr.Join([]error{err, runFlags.problems(cmd, &o)})
			if o.Inventory, err = inventoryOf(runFlags.inventory, err); err != nil {
				if s != nil { // the study's own options too: every problem at once
					if h, herr := cli.home(); herr == nil {
						o.Home = h
						_, _, cerr := study.Choose(s, o)
						err = hderr.Join([]error{err, cerr})
					}
				}
				return err
			}
			h, err := cli.home()
			if err != nil {
				return err
			}
			o.Home, o.Keep, o.Command, o.Log, o.Wait = h, runFlags.keep, os.Args, cli.progressLog(), cli.wait
			if runFlags.dryRun {
				said, err := study.DryRun(s, o)
				if err != nil {
					return err
				}
				return cli.emit(map[string]any{"study": s.Name, "scale": o.Scale, "fits": true, "says": said}, func() { fmt.Println(said) })
			}
			return cli.studyRun(cmd.Context(), s, o)
		},
	}
	run.Flags().StringVar(&file, "file", "", "a study file of your own")
	run.Flags().StringVar(&o.Scale, "scale", "quick", "quick (fits this computer in minutes) or full (the document's protocol)")
	run.Flags().StringSliceVar(&o.Variants, "variants", nil, "run only these variants (default: all)")
	run.Flags().BoolVar(&runFlags.keep, "keep", false, "leave the variants' labs up afterwards")
	run.Flags().BoolVar(&runFlags.dryRun, "dry-run", false, "check the run, make nothing: what its labs need against this computer (exit 2 when they would not fit) and the least time its rounds take")
	run.Flags().BoolVar(&o.Decide, "decide", false, "a two-look design: the scale's rounds are a pilot that decides the claims it can and sizes the rounds each other claim needs; then those rounds, judged by Stein's interval")
	run.Flags().DurationVar(&o.Budget, "budget", 0, "with --decide: the most time the rounds may take in all (e.g. 30m; default: no limit)")
	run.Flags().StringVar(&runFlags.maxMemory, "max-memory", "", "the most memory the labs may hold at once here (e.g. 8G; default: 90 % of what is available); labs that would hold more take turns in groups")
	run.Flags().StringVar(&runFlags.inventory, "inventory", "", "run the labs on these machines, over SSH, one at a time (YAML: see `hadrill preflight`)")
	run.Flags().StringVar(&runFlags.resume, "resume", "", "go on from a stored run of the study that stopped before its end: its complete rounds kept, the rest run now (its scale, variants and design unless given)")
	return run
}

// resumed is the stored study run --resume names (its problems said as
// --resume's).
func (cli *app) resumed(id string) (*study.Stored, error) {
	h, err := cli.home()
	if err != nil {
		return nil, err
	}
	_, res, err := study.LoadRun(h, id)
	var u *hderr.UserError
	if errors.As(err, &u) {
		problems := make([]string, len(u.Problems))
		for i, p := range u.Problems {
			problems[i] = "--resume: " + strings.TrimPrefix(strings.TrimPrefix(p, "RUN_ID: "), "RUN: ")
		}
		return nil, hderr.Users(problems)
	}
	if err != nil {
		return nil, err
	}
	if res.Study == nil {
		return nil, hderr.User("--resume: run %s holds no study", id)
	}
	return &study.Stored{ID: id, Result: res}, nil
}

// resumeDefaults takes the stopped run's scale, variants, design and
// budget for the flags not given; o goes on from it.
func resumeDefaults(cmd *cobra.Command, o *study.Options, prev *study.Stored) {
	p := prev.Result
	if !cmd.Flags().Changed("scale") {
		o.Scale = p.Scale
	}
	if !cmd.Flags().Changed("variants") && len(p.Variants) < len(p.Study.Variants) {
		o.Variants = p.Variants
	}
	if !cmd.Flags().Changed("decide") {
		o.Decide = p.Decide || p.Design != nil
	}
	if !cmd.Flags().Changed("budget") && p.Design == nil {
		o.Budget = p.Budget
	}
	o.Resume = prev
}

// studyRunFlags are study run's flags that are not the study's options
// themselves.
type studyRunFlags struct {
	keep, dryRun                 bool
	inventory, maxMemory, resume string
}

// problems are what is wrong with the flags given (nil: nothing); o
// takes --max-memory's size.
func (f studyRunFlags) problems(cmd *cobra.Command, o *study.Options) error {
	var errs []error
	if cmd.Flags().Changed("variants") && len(o.Variants) == 0 {
		errs = append(errs, hderr.User("--variants: empty: name the variants to run, or leave out --variants to run every one"))
	}
	if f.maxMemory != "" {
		n, err := spec.ParseSize(f.maxMemory)
		if err != nil || n <= 0 {
			errs = append(errs, hderr.User("--max-memory: %q: want a size such as 4G or 512M", f.maxMemory))
		}
		o.MaxMemory = n
	}
	return hderr.Join(errs)
}

// studyRun runs a study and prints its finding; its exit status is the
// verdict's.
func (cli *app) studyRun(ctx context.Context, s *study.Study, o study.Options) error {
	res, id, runErr := study.Run(ctx, s, o)
	if res == nil || id == "" {
		return runErr
	}
	// stored, even when a step failed: show what was measured
	if err := cli.emit(map[string]any{"run_id": id, "result": res}, func() {
		fmt.Printf("study run %s\n\n%s\n\nreport: hadrill study report %s -o %s.html\n", id, res.Finding, id, s.Name)
	}); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if res.Interrupted {
		return fmt.Errorf("interrupted: the partial results are kept in run %s; go on from them with `hadrill study run --resume %s`", id, id)
	}
	return study.Verdict(res, id)
}

func (cli *app) studyReportCmd() *cobra.Command {
	var out, pngDir string
	report := &cobra.Command{
		Use: "report RUN -o FILE.html [--png DIR]", Short: "Write a study run's report: its finding, charts with the published figures, every figure with its spread",
		Args: args(1, 1, "a study run id"),
		RunE: func(_ *cobra.Command, a []string) error {
			if err := checkHTML(out); err != nil {
				return err
			}
			h, err := cli.home()
			if err != nil {
				return err
			}
			r, res, err := study.LoadRun(h, a[0])
			if err != nil {
				return err
			}
			ctx := study.Gather(h, res)
			b, err := study.HTML(r, res, ctx)
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return err
			}
			fmt.Printf("wrote %s: study %s, run %s\n", out, res.Study.Name, r.ID)
			if pngDir != "" {
				charts := study.Charts(res, ctx)
				if err := chart.WritePNGs(pngDir, charts); err != nil {
					return err
				}
				fmt.Printf("wrote %d charts as PNG into %s\n", len(charts), pngDir)
			}
			return nil
		},
	}
	htmlFlag(report, &out, "")
	report.Flags().StringVar(&pngDir, "png", "", "also write each chart as PNG into this directory")
	return report
}

func (cli *app) studyTallyCmd() *cobra.Command {
	var scale string
	var rejudge bool
	c := &cobra.Command{
		Use:   "tally [RUN...] [--scale quick|full]",
		Short: "Count a campaign's claims over its study runs: reproduced, not, inconclusive, the share still inconclusive, each claim in one line",
		Long: `Counts every claim of a set of study runs, one a study: the named runs, or, with none named, the newest
run of each study at --scale (default quick) in the run store (what make studies made). It opens with one
sentence: the studies, the claims that count and how many reproduced, did not, stayed inconclusive or were
not measured, the share still inconclusive, the claims that count for nothing (not checkable here, of the
other scale, not run) and the studies of figures only; then each study's answer and its claims one a line
(the verdict, ours with its interval against the claim's bounds, the words, the one reason). -o json has
the counts and every check. --rejudge judges each run's rounds by today's claims of its study, as
study run --resume does (a claim's bounds or form changed since a sitting), when its variants, steps,
scale and the claims' figures are the run's; each study says how it was judged. An unknown run, one not a
study's, or two runs of one study are refused (exit 2, each named).`,
		Args: args(0, -1, "study run ids"),
		RunE: func(cmd *cobra.Command, a []string) error {
			var problems []string
			if scale != "quick" && scale != "full" {
				problems = append(problems, fmt.Sprintf("--scale: expected quick or full, got %q", scale))
			}
			if cmd.Flags().Changed("scale") && len(a) > 0 {
				problems = append(problems, "--scale: chooses the runs when none is named; named runs are counted at their own scale")
			}
			h, err := cli.home()
			if err != nil {
				return err
			}
			runs, err := study.CampaignRuns(h, a, scale)
			if len(problems) > 0 { // with the runs' own problems, every one at once
				if hderr.IsUser(err) && len(a) > 0 {
					problems = append(problems, strings.Split(err.Error(), "\n")...)
				}
				return hderr.Users(problems)
			}
			if err != nil {
				return err
			}
			if rejudge {
				runs = study.Rejudge(h, runs)
			}
			c := study.NewCampaign(runs)
			return cli.emit(c, func() { fmt.Print(c.Text()) })
		},
	}
	c.Flags().StringVar(&scale, "scale", "quick", "with no run named: the scale whose newest runs are counted (quick or full)")
	c.Flags().BoolVar(&rejudge, "rejudge", false, "judge each run's rounds by today's claims of its study (their words, bounds and form may have changed since; its variants, steps, scale and the claims' figures must not, else its own verdicts, said)")
	return c
}

const studyRunLong = `Brings every variant's lab up (named s, four characters of the study, the variant), runs the study's steps on each variant, round
after round with the variants interleaved (each round starts one later), then removes the labs (--keep
leaves them). Every step is a run in the run store; the study's own run holds each figure's median,
range, an interval of the median with its stated confidence (with fewer than 6 rounds, the range: 75 %
for 3 rounds), change against the baseline ("within noise" unless Welch's t-test on the rounds
calls it a difference, which it does for set-ups that do not differ at most 5 % of the time) and
the published value, and opens with its finding: the answer first, then each of the document's
claims (its words and place) reproduced (our figure's 90 % interval within the claim's bounds),
not reproduced (wholly outside them), inconclusive (crossing a bound: noise cannot tell) or not
measured, with what differs from the document and what the run saw at a limit; a claim the study
says this computer cannot decide is not_checkable, one only the other scale measures other_scale
(both count for nothing). The deviations from the document are the study file's and those the run
records itself: its document: block (server, Galera, tools, warm-up, runs) against what ran here.
Exit status 0 when every claim reproduced, 4 when the study ran to the end and some did not, 1 when
a claim was not measured. Ctrl-C, or a step that fails, stops it: what was measured is summarised
and kept, and the labs are removed (exit 1 for the failed step; interrupted, hadrill ends by the signal); --resume RUN goes on from it, its complete rounds kept
(the same study, variants, scale, design and software, or refused). --dry-run makes nothing: it says what the labs would
need against this computer (exit 2 when they would not fit) and the least time the rounds take.

When the labs would not fit this computer at once (memory once their data is loaded, or files; at
most 90 % of what is available, or --max-memory), they take turns in groups that do: the fewest
groups, then the fewest compared variants apart; each group's labs come up, run their rounds
interleaved among themselves and go, then the next group's. The finding and the report name the
groups and the claims whose rounds ran apart; a lab that does not fit even alone is refused (exit 2).

With --decide the scale's rounds are the pilot of a two-look design: each claim is first judged on
the pilot alone at 1 % a bound, and one that decides there is done; each other claim's spread in the
pilot gives the rounds it needs to decide a figure 5 % beyond its bound with 80 % power; the study
runs the most any claim needs (within --budget, from the pilot's time a round), then judges those
claims by Stein's interval at 4 % a bound, whose width comes from the pilot: together the two looks
keep a false "reproduced" at 5 % per bound, where running rounds until a verdict decides would not.
A claim still inconclusive says how many rounds it would need.

With --inventory the labs run on the machines it names, over SSH, one at a time (they would
listen on the same ports): a variant's lab comes up when its turn comes. Machines, disks and NICs
are emulated on this computer only: there the hosts' own stand in, the run says so for each
variant, and variants that differ only in them are refused (they would be the same set-up), as
are disk steps and --keep.`
