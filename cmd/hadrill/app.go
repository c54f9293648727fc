package main

import (
	"encoding/json"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"os"
	"sync/atomic"
	"time"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/state"
)

// app is what every command shares: the global flags, and what the
// command opened and must release when it ends. main makes one; each
// command is a method of it.
type app struct {
	homeFlag string        // --home
	output   string        // --output: text or json
	labFlag  string        // --name
	wait     time.Duration // --wait: how long to wait for a busy lab
	// unlocks release the locks the command took; opened is the first lab
	// it opened.
	unlocks []func()
	opened  *openedLab
	// daemon is set by the daemons hadrill places on hosts (agent, keeper,
	// netem, disk): they run in sessions of their own, and SIGHUP means
	// what each makes of it (netem: reload its links).
	daemon atomic.Bool
	// facts are this computer's facts a plan is built from (nil: read
	// them, facts.Machine; tests give fixed ones).
	facts func() plan.Facts
}

// machine is this computer's facts, as plans are built from them.
func (cli *app) machine() plan.Facts {
	if cli.facts != nil {
		return cli.facts()
	}
	return facts.Machine()
}

func (cli *app) home() (string, error) { return state.Home(cli.homeFlag) }

// labName resolves --name or the only lab.
func (cli *app) labName() (string, error) {
	h, err := cli.home()
	if err != nil {
		return "", err
	}
	return state.Resolve(h, cli.labFlag)
}

// emit prints v as JSON with --output json, or text otherwise.
func (cli *app) emit(v any, text func()) error {
	if cli.output == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text()
	return nil
}

// openLab opens a lab for a command that only reads it.
func (cli *app) openLab() (*lab.Lab, error) { return cli.lockedLab("") }

// changeLab opens a lab for a command that changes it: the lab's writer
// lock is held until the command ends, so one change happens at a time.
func (cli *app) changeLab() (*lab.Lab, error) { return cli.lockedLab(state.Writer) }

// benchLab opens a lab for a benchmark: one at a time per lab (faults may
// still be injected under it; `down` ends it first). A lab stopped as a
// whole is refused: nothing in it would answer.
func (cli *app) benchLab() (*lab.Lab, error) {
	l, err := cli.lockedLab(state.Bench)
	if err != nil {
		return nil, err
	}
	return l, stopped(l)
}

// stopped refuses a lab stopped as a whole (stop --all, or a down that
// could not finish), naming how to bring it back.
func stopped(l *lab.Lab) error {
	if l.State.Status != state.Stopped {
		return nil
	}
	name := l.Plan().Lab
	return hderr.User("--name: lab %s is stopped: hadrill start --all --name %s (or up --name %s) brings it back", name, name, name)
}

// lockedLab takes the lab's lock of kind k (none when k is empty), then
// reads the lab: what it reads is what the holder of the lock sees.
func (cli *app) lockedLab(k state.Kind) (*lab.Lab, error) {
	name, err := cli.labName()
	if err != nil {
		return nil, err
	}
	h, err := cli.home()
	if err != nil {
		return nil, err
	}
	if err := plan.CheckLabName(name); err != nil {
		return nil, err // a name is never a path
	}
	if _, err := state.Load(h, name); hderr.IsUser(err) {
		return nil, err // no such lab: said before its lock would make the home's labs directory
	}
	if k != "" {
		unlock, err := state.Lock(h, name, k, cli.wait)
		if err != nil {
			return nil, err
		}
		cli.unlocks = append(cli.unlocks, unlock)
	}
	l, err := lab.Open(h, name, os.Stderr) // an unknown lab is named as such (its lock file goes with the unlock)
	if err == nil && cli.opened == nil {
		cli.opened = &openedLab{lab: l, kills: l.Kills()}
	}
	return l, err
}

// openedLab is the lab a command works on, with its hosts' memory-limit
// kills when it was opened: a command that fails says when one happened.
type openedLab struct {
	lab   *lab.Lab
	kills map[string]int
}
