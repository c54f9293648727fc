package study

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/preflight"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload"
)

// placement brings the variants' labs up and down. On this computer every
// lab comes up before the first round and stays until the last (labs do
// not share addresses). On the machines of an inventory they take turns:
// a variant's lab comes up when its turn comes and goes when another's
// does, since every lab would listen on the same ports of the same
// machines. Variants with the same set-up share a lab either way; a
// server outside any lab (an endpoint) needs none.
type placement struct {
	s      *Study
	o      Options
	res    *Result
	specs  map[string]*spec.Spec // variant -> the spec its lab is made from
	setup  map[string]string     // variant -> its set-up (the spec and load target, as JSON)
	labs   map[string]workload.Lab
	inv    map[string]*inventory.Resolved // remote: variant -> the part of the inventory its lab uses
	remote bool
	up     string // remote: the set-up whose lab is up now
	// groups are the variants whose labs are up together, one group after
	// another (one group of every variant when they fit at once, and on
	// remote hosts, where the labs take turns by themselves).
	groups [][]string
	// held are the writer locks of the labs the study made, held while
	// they are up: no other command changes or removes them under it.
	held map[string]func()
	// logs are where each lab the study made says what it does (the step
	// running on it keeps it: a drill in its run's drill.log).
	logs map[string]*labLog
}

// newPlacement works out each variant's spec and set-up (on remote hosts
// without what is emulated on this computer only) and checks what would
// make the study meaningless or impossible there, every problem at once,
// before anything is made.
func newPlacement(s *Study, variants []string, o Options, res *Result) (*placement, error) {
	p := &placement{s: s, o: o, res: res, specs: map[string]*spec.Spec{}, setup: map[string]string{}, labs: map[string]workload.Lab{},
		inv: map[string]*inventory.Resolved{}, remote: o.Inventory != nil, held: map[string]func(){},
		logs: map[string]*labLog{}}
	var problems []string
	if p.remote && o.Keep {
		problems = append(problems, "--keep: on remote hosts the variants' labs take turns on the same machines (they listen on the same ports), so none is left up; leave out --keep")
	}
	for i, st := range s.Steps {
		if k := kindOf(st); p.remote && k != nil && k.local {
			problems = append(problems, fmt.Sprintf("steps[%d] (%s): a disk step measures a volume emulated on this computer; remote hosts have their own disks: run this study here", i, st.Name))
		}
	}
	var keys []string              // set-ups, in the order of their first variant
	byKey := map[string][]string{} // set-up -> its variants
	used := map[string]bool{}      // remote: the inventory's hosts and pairs some variant uses
	for _, name := range variants {
		v := variant(s, name)
		if v.Endpoint != "" {
			continue
		}
		sp, err := v.Spec()
		if err != nil {
			return nil, err
		}
		if p.remote {
			i := slices.IndexFunc(s.Variants, func(x Variant) bool { return x.Name == name })
			s.Variants[i].Hosts, s.Variants[i].NotEmulated = o.Inventory.File, sp.DropEmulated()
			hosts, pairs := sp.HostNames()
			for _, h := range slices.Concat(hosts, pairs) {
				used[h] = true
			}
			p.inv[name] = o.Inventory.Only(hosts, pairs) // the inventory's other hosts are other variants'
			if err := p.inv[name].Check(hosts, pairs); err != nil {
				problems = append(problems, prefixed("variant "+name+": ", err)...)
			}
		}
		b, _ := json.Marshal(struct {
			Spec   *spec.Spec
			Target string
		}{sp, v.Target})
		key := string(b)
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		byKey[key] = append(byKey[key], name)
		p.specs[name], p.setup[name] = sp, key
	}
	for _, k := range keys {
		if same := byKey[k]; p.remote && len(same) > 1 && !sameLocally(s, same) {
			var paths []string
			for _, name := range same[1:] {
				for _, d := range differing(variant(s, same[0]).NotEmulated, variant(s, name).NotEmulated) {
					if !slices.Contains(paths, d) {
						paths = append(paths, d)
					}
				}
			}
			problems = append(problems, fmt.Sprintf("--variants: on remote hosts %s are the same set-up: they differ only in what is emulated on this computer (%s); run one of them (--variants %s), or the study on this computer",
				words.And(same), strings.Join(paths, ", "), same[0]))
		}
	}
	if p.remote {
		for _, h := range o.Inventory.Names() {
			if !used[h] {
				problems = append(problems, fmt.Sprintf("%s: hosts.%s: no variant of the study has a host of that name", o.Inventory.File, h))
			}
		}
		for _, lb := range slices.Sorted(maps.Keys(o.Inventory.VirtualIPs)) {
			if !used[lb] {
				problems = append(problems, fmt.Sprintf("%s: virtual_ips.%s: no variant of the study has a load balancer pair of that name", o.Inventory.File, lb))
			}
		}
	}
	if err := hderr.Users(problems); err != nil {
		return nil, err
	}
	return p, nil
}

// sameLocally says whether variants have the same set-up on this computer
// too (a study may run one set-up under two names on purpose).
func sameLocally(s *Study, names []string) bool {
	var first string
	for i, name := range names {
		v := variant(s, name)
		sp, err := v.Spec()
		if err != nil {
			return false
		}
		b, _ := json.Marshal(struct {
			Spec   *spec.Spec
			Target string
		}{sp, v.Target})
		if i == 0 {
			first = string(b)
		} else if string(b) != first {
			return false
		}
	}
	return true
}

// differing names the emulated settings whose values two variants do not
// share.
func differing(a, b []spec.Emulated) []string {
	values := func(xs []spec.Emulated) map[string]string {
		m := map[string]string{}
		for _, x := range xs {
			m[x.Path] = x.Value
		}
		return m
	}
	va, vb := values(a), values(b)
	var out []string
	for _, xs := range [][]spec.Emulated{a, b} {
		for _, x := range xs {
			if va[x.Path] != vb[x.Path] && !slices.Contains(out, x.Path) {
				out = append(out, x.Path)
			}
		}
	}
	return out
}

func prefixed(prefix string, err error) []string {
	if u, ok := err.(*hderr.UserError); ok {
		var out []string
		for _, p := range u.Problems {
			out = append(out, prefix+p)
		}
		return out
	}
	return []string{prefix + err.Error()}
}

// checkHosts connects to every machine of the inventory once, before
// anything is made, with what all the variants need of each: a host that
// one variant's turn would find wanting fails the study now.
func (p *placement) checkHosts(ctx context.Context) error {
	if !p.remote {
		var problems []string
		for _, name := range p.res.Variants { // each variant's overrides, as this computer's server reads them
			if s := p.specs[name]; s != nil {
				if err := facts.Options(ctx, s); err != nil {
					if !hderr.IsUser(err) {
						return err
					}
					problems = append(problems, prefixed("variant "+name+": ", err)...)
				}
			}
		}
		return hderr.Users(problems)
	}
	var labs []string
	for _, name := range p.res.Variants {
		if p.specs[name] != nil {
			labs = append(labs, name)
		}
	}
	if len(labs) == 0 {
		return nil
	}
	rep, err := preflight.Run(ctx, p.o.Inventory, preflight.Options{Arch: runtime.GOARCH}, func(f plan.Facts) (map[string]preflight.Need, error) {
		var all []map[string]preflight.Need
		for _, name := range labs { // each variant's plan, as its turn builds it
			pl, err := plan.Build(p.specs[name], LabName(p.s.Name, name), p.o.Home, f)
			if err != nil {
				return nil, fmt.Errorf("variant %s: %w", name, err)
			}
			all = append(all, preflight.Needs(pl))
		}
		return preflight.Union(all...), nil
	})
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("preflight of %s:\n%w", p.o.Inventory.File, err)
	}
	if err := hderr.Users(rep.Problems()); err != nil {
		return fmt.Errorf("preflight of %s:\n%w", p.o.Inventory.File, err)
	}
	return nil
}

// endpoints checks the servers outside any lab: one that does not answer
// fails the study before any lab is made.
func (p *placement) endpoints(ctx context.Context) error {
	for _, name := range p.res.Variants {
		if v := variant(p.s, name); v.Endpoint != "" {
			d := workload.Direct{HomeDir: p.o.Home, Name: "study-" + p.s.Name}
			if _, err := workload.ResolveList(ctx, d, v.Endpoint, v.Credentials); err != nil {
				return fmt.Errorf("variant %s: %w", name, err)
			}
			p.labs[name] = d
		}
	}
	return nil
}

// upAll brings every lab up at once (this computer).
func (p *placement) upAll(ctx context.Context) error {
	if p.remote {
		return nil
	}
	return p.upGroup(ctx, p.res.Variants)
}

// upGroup brings up the labs of a group of variants (this computer, when
// the labs take turns in groups).
func (p *placement) upGroup(ctx context.Context, group []string) error {
	for _, name := range group {
		if _, err := p.lab(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// lab is the variant's lab, brought up if it is not (on remote hosts the
// lab of another set-up goes first).
func (p *placement) lab(ctx context.Context, name string) (workload.Lab, error) {
	if l, ok := p.labs[name]; ok {
		return l, nil
	}
	key := p.setup[name]
	for other, l := range p.labs { // the same set-up: one lab, reused
		if p.setup[other] == key && key != "" {
			fmt.Fprintf(p.o.Log, "study %s: %s runs in lab %s (the same set-up as %s)\n", p.s.Name, variant(p.s, name).Title(), p.res.Labs[other], other)
			p.labs[name], p.res.Labs[name] = l, p.res.Labs[other]
			return l, nil
		}
	}
	if p.remote && p.up != "" {
		p.down(ctx)
	}
	v, labName := variant(p.s, name), LabName(p.s.Name, name)
	where := ""
	if p.remote {
		where = " on the machines of " + p.o.Inventory.File
	}
	fmt.Fprintf(p.o.Log, "study %s: bringing up %s (%s) as lab %s%s\n", p.s.Name, v.Title(), v.Preset, labName, where)
	var unlock func()
	log := &labLog{}
	l, err := lab.Up(ctx, p.o.Home, lab.UpOptions{Name: labName, Spec: p.specs[name], SpecGiven: true, Inventory: p.inv[name], Log: log, Hold: &unlock})
	if unlock != nil {
		p.held[labName] = unlock
	}
	if l != nil {
		p.labs[name], p.res.Labs[name], p.logs[labName] = l, labName, log
	}
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", name, err)
	}
	p.up = key
	return l, nil
}

// logOf is where the variant's lab says what it does (nil: a lab the
// study did not make).
func (p *placement) logOf(name string) *labLog { return p.logs[p.res.Labs[name]] }

// down removes the labs that are up (on remote hosts the one whose turn it
// was), and forgets them.
func (p *placement) down(ctx context.Context) {
	removed := map[string]bool{}
	for name := range p.labs {
		if variant(p.s, name).Endpoint != "" {
			continue
		}
		labName := p.res.Labs[name]
		delete(p.labs, name)
		if labName == "" || removed[labName] {
			continue
		}
		removed[labName] = true
		delete(p.logs, labName)
		fmt.Fprintf(p.o.Log, "study: removing lab %s\n", labName)
		var err error
		if unlock, ok := p.held[labName]; ok {
			delete(p.held, labName)
			err = lab.DownHeld(context.WithoutCancel(ctx), p.o.Home, labName, false, io.Discard, unlock)
		} else {
			err = lab.Down(context.WithoutCancel(ctx), p.o.Home, labName, false, 0, io.Discard)
		}
		if err != nil {
			fmt.Fprintf(p.o.Log, "warning: %s: %v\n", labName, err)
		}
	}
	p.up = ""
}

// close removes every lab still up, unless the study keeps them.
func (p *placement) close(ctx context.Context) {
	if !p.o.Keep {
		p.down(ctx)
	}
	for name, unlock := range p.held { // kept: yours from now on
		unlock()
		delete(p.held, name)
	}
}

// hostsNote says, for a study run on remote hosts, how the labs took
// their turns and what of each variant was not emulated there.
func hostsNote(s *Study, variants []string, inventory string) string {
	var groups []string
	byPaths := map[string][]string{} // the settings, joined -> variants
	for _, name := range variants {
		v := variant(s, name)
		if len(v.NotEmulated) == 0 {
			continue
		}
		var paths []string
		for _, e := range v.NotEmulated {
			paths = append(paths, e.Path)
		}
		k := strings.Join(paths, ", ")
		if byPaths[k] == nil {
			groups = append(groups, k)
		}
		byPaths[k] = append(byPaths[k], name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Ran on the machines of %s, one variant's lab at a time (each brought up when its variant's turn came).", inventory)
	for i, k := range groups {
		if i == 0 {
			b.WriteString(" Emulated on this computer only, so the hosts' own machines, disks and NICs stood in for them: ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", k, strings.Join(byPaths[k], ", "))
	}
	if len(groups) > 0 {
		b.WriteString(".")
	}
	return b.String()
}

// OnHosts lists what stops the study, with all its variants, from meaning
// something on remote hosts (nothing: it runs there), given an inventory
// that names every host its variants use.
func (s *Study) OnHosts() []string {
	cp := *s
	cp.Variants = slices.Clone(s.Variants)
	inv := &inventory.Resolved{File: "inventory", Hosts: map[string]inventory.Host{}, VirtualIPs: map[string]string{}}
	var names []string
	for _, v := range cp.Variants {
		names = append(names, v.Name)
		if v.Endpoint != "" {
			continue
		}
		sp, err := v.Spec()
		if err != nil {
			return []string{err.Error()}
		}
		sp.DropEmulated()
		hosts, pairs := sp.HostNames()
		for _, h := range hosts {
			inv.Hosts[h] = inventory.Host{Name: h}
		}
		for _, lb := range pairs {
			inv.VirtualIPs[lb] = ""
		}
	}
	_, err := newPlacement(&cp, names, Options{Inventory: inv}, &Result{Labs: map[string]string{}})
	if err == nil {
		return nil
	}
	return prefixed("", err)
}
