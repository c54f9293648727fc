package chaos

import (
	"context"
	"errors"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// File is `hadrill fault file NODE FILE …`: one file of a node's server
// damaged on its emulated volume, as a disk or a hand does it. A bit
// flipped at rest (the disk returns the byte damaged, without an error,
// until the sector is written again); the next write of one of its pages
// acknowledged and lost (the page keeps its earlier content: a rolled-back
// page) or torn (only its first 4K written); the file truncated (its tail
// kept aside). Heal gives a flipped bit and a cut tail back; a write lost
// or torn stays so, as on a real disk.
type File struct {
	Node, Path string
	Flip       bool
	Bit        int
	LoseWrite  bool
	Torn       bool
	Truncate   string
	At         string
}

// Page is the unit a lost or torn write takes: InnoDB's page (16K, the
// default innodb_page_size), of which a torn write keeps the first 4K (a
// sector of a 4K disk).
const (
	Page     = 16 << 10
	tornKeep = 4 << 10
	// flipInto is how far into the page a flip lands by default: past its
	// header, in what its checksum covers.
	flipInto = 150
)

// fileKind is `fault file`, of the disk family (its heal is the disks').
var fileKind = Kind{
	Name: fault.File, Use: "file NODE FILE (--flip [--bit N] | --lose-write | --torn | --truncate SIZE) [--at OFFSET]",
	Short: "Damage a file of a node's server on its emulated volume: a bit flipped at rest, a page's next write lost or torn, the file truncated",
	Long: `FILE is a path in the server's data directory (app/t.ibd, ibdata1, ib_logfile0), or in its redo
or binary log directory when those are elsewhere; it must be on an emulated volume (ext4 or xfs for
a flip or a dropped write). --at is a byte offset in the file (default: page 3 of a table's .ibd,
the root of its clustered index every read goes through; the page in the middle of another file).
  --flip [--bit N]   bit N (0-7, default 0) of the byte at --at (default 150 bytes into the
                     page) reads flipped, as a disk returns a damaged sector without an error,
                     until the sector is written again; heal gives the true byte back
  --lose-write       the next write of the 16K page holding --at is acknowledged and lost: the
                     page keeps its earlier content (a rolled-back page); heal does not undo it
  --torn             the next write of that page keeps only its first 4K; the rest keeps its
                     earlier content (InnoDB's doublewrite buffer is there for this)
  --truncate SIZE    the file is cut to SIZE bytes (e.g. 48K); its tail is kept, and heal gives it
                     back if the file still has the size the cut left
InnoDB meets a flip or a torn page when it next reads the page from disk: after a restart, or
once the page has left the buffer pool.`,
	MinArgs: 2, MaxArgs: 2, ArgsWhat: "a node and a file",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		var f File
		fs.BoolVar(&f.Flip, "flip", false, "flip a bit of the byte at --at, as the disk returns it")
		fs.IntVar(&f.Bit, "bit", 0, "the bit --flip flips (0-7)")
		fs.BoolVar(&f.LoseWrite, "lose-write", false, "the next write of the page at --at is acknowledged and lost")
		fs.BoolVar(&f.Torn, "torn", false, "the next write of the page at --at keeps only its first 4K")
		fs.StringVar(&f.Truncate, "truncate", "", "cut the file to this size (e.g. 48K)")
		fs.StringVar(&f.At, "at", "", "a byte offset in the file (e.g. 49302 or 48K; default: page 3 of an .ibd, else the page in its middle)")
		return func(a []string) (Fault, error) {
			f.Node, f.Path = a[0], a[1]
			return f, nil
		}
	},
}

// fileTarget is a File resolved against the lab: where the file is, and
// the bytes the fault acts on.
type fileTarget struct {
	node   *plan.Node
	volume plan.Volume
	path   string // absolute
	size   int64
	at     int64 // the byte a flip flips; the page of a dropped write starts at page
	page   int64
	pageN  int64
	to     int64 // a truncation's size
}

// actions are the fault's actions given.
func (f File) actions() []string {
	var out []string
	for _, a := range []struct {
		on   bool
		name string
	}{{f.Flip, "--flip"}, {f.LoseWrite, "--lose-write"}, {f.Torn, "--torn"}, {f.Truncate != "", "--truncate"}} {
		if a.on {
			out = append(out, a.name)
		}
	}
	return out
}

// Resolve checks the fault against the lab, naming every problem at once.
func (f File) Resolve(p *plan.Plan) (fileTarget, error) {
	var t fileTarget
	var problems []string
	switch acts := f.actions(); len(acts) {
	case 0:
		problems = append(problems, "give one of --flip, --lose-write, --torn, --truncate")
	case 1:
	default:
		problems = append(problems, "give one of --flip, --lose-write, --torn, --truncate, not "+words.And(acts))
	}
	if f.Bit < 0 || f.Bit > 7 {
		problems = append(problems, fmt.Sprintf("--bit: expected a bit of a byte, 0 to 7, got %d", f.Bit))
	} else if f.Bit != 0 && !f.Flip {
		problems = append(problems, "--bit: the bit --flip flips; give --flip too")
	}
	at := int64(-1)
	if f.At != "" {
		v, err := spec.ParseSize(f.At)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("--at: expected a byte offset such as 49302 or 48K, got %q", f.At))
		case f.Truncate != "":
			problems = append(problems, "--at: a truncation takes its size from --truncate; leave --at out")
		default:
			at = v
		}
	}
	t.to = -1
	if f.Truncate != "" {
		v, err := spec.ParseSize(f.Truncate)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--truncate: expected a size such as 48K or 0, got %q", f.Truncate))
		} else {
			t.to = v
		}
	}
	rel := filepath.Clean(f.Path)
	relOK := f.Path != "" && !filepath.IsAbs(f.Path) && rel != "." && !strings.HasPrefix(rel, "..")
	if !relOK {
		problems = append(problems, fmt.Sprintf("FILE: expected a path in the server's data directory, such as app/t.ibd, ibdata1 or ib_logfile0, got %q", f.Path))
	}
	n, ok := p.Node(f.Node)
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("NODE: %q is not a node of lab %s (nodes: %s)", f.Node, p.Lab, strings.Join(nodeNames(p), ", ")))
	case p.Disks == nil || len(n.Volumes) == 0:
		problems = append(problems, fmt.Sprintf("NODE: %s has no emulated volume (its files are on this computer's own disk): give its cluster storage volumes in the spec (as preset cloud3 does)", f.Node))
	case relOK:
		t.node = n
		var looked []string
		for _, dir := range []string{n.DataDir, n.RedoDir, n.BinlogDir} {
			if dir == "" {
				continue
			}
			looked = append(looked, dir)
			if st, err := os.Stat(filepath.Join(dir, rel)); err == nil && st.Mode().IsRegular() {
				t.path, t.size = filepath.Join(dir, rel), st.Size()
				break
			}
		}
		if t.path == "" {
			problems = append(problems, fmt.Sprintf("FILE: %s has no file %s in %s", f.Node, rel, words.Or(looked)))
			break
		}
		for _, v := range n.Volumes {
			if v.Holds(t.path) {
				t.volume = v
			}
		}
		switch {
		case t.volume.Name == "":
			problems = append(problems, fmt.Sprintf("FILE: %s is on none of %s's emulated volumes", t.path, f.Node))
		case t.volume.FS == "btrfs" && t.to < 0:
			problems = append(problems, fmt.Sprintf("FILE: %s is on %s's %s volume, btrfs, which places blocks itself: a flip or a dropped write needs ext4 or xfs", rel, f.Node, t.volume.Name))
		}
		problems = append(problems, t.place(f, at)...)
	}
	return t, hderr.Users(problems)
}

// place fixes the bytes the fault acts on in a file of t.size bytes.
func (t *fileTarget) place(f File, at int64) []string {
	if t.to >= 0 {
		if t.to >= t.size {
			return []string{fmt.Sprintf("--truncate: %s is %s (%d bytes): expected a size below that, got %s", f.Path, spec.FormatSize(t.size), t.size, f.Truncate)}
		}
		return nil
	}
	if t.size == 0 {
		return []string{fmt.Sprintf("FILE: %s is empty: nothing to damage", f.Path)}
	}
	if at >= t.size {
		return []string{fmt.Sprintf("--at: %s is %d bytes: expected an offset below that, got %s", f.Path, t.size, f.At)}
	}
	if at < 0 { // an InnoDB tablespace's page 3 (its clustered index's root), else the page in the middle
		at = t.size / 2 / Page * Page
		if strings.HasSuffix(t.path, ".ibd") && t.size >= 4*Page {
			at = 3 * Page
		}
		if f.Flip {
			at = min(at+flipInto, t.size-1)
		}
	}
	t.at, t.page = at, at/Page*Page
	t.pageN = min(Page, t.size-t.page)
	if f.Torn && t.pageN <= tornKeep {
		return []string{fmt.Sprintf("--torn: the page of %s at %d is %d bytes: nothing past its first 4K to tear", f.Path, t.page, t.pageN)}
	}
	return nil
}

// String is the fault as the log shows it.
func (f File) String() string {
	switch {
	case f.Flip:
		return fmt.Sprintf("flip %s bit %d", f.Path, f.Bit)
	case f.LoseWrite:
		return "lose-write " + f.Path
	case f.Torn:
		return "torn " + f.Path
	}
	return fmt.Sprintf("truncate %s to %s", f.Path, f.Truncate)
}

// Inject damages the file: a flip or a dropped write through the disk
// daemon, at the place on the device the file system gives the bytes; a
// truncation on the file itself, its tail kept.
func (f File) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	t, err := f.Resolve(p)
	if err != nil {
		return err
	}
	if dry, err := disksReady(ctx, l); dry || err != nil {
		return err
	}
	at := time.Now().UTC()
	rec := fault.Record{Fault: fault.File, Targets: []string{f.Node}, At: at}
	if t.to >= 0 {
		c, err := disk.Truncate(p, disk.Cut{Node: f.Node, File: f.Path, Path: t.path, To: t.to, At: at})
		if err != nil {
			return err
		}
		l.Logf("%s: %s cut from %d to %d bytes (the %d bytes cut kept for heal)", f.Node, f.Path, c.From, c.To, c.From-c.To)
		rec.Value = fmt.Sprintf("truncate %s from %d to %d bytes", f.Path, c.From, c.To)
		return l.Record(rec)
	}
	now, err := disk.ReadFaults(p)
	if err != nil {
		return err
	}
	df := now[t.volume.Device].Faults
	pageNo := t.page / Page
	switch {
	case f.Flip:
		off, err := disk.Locate(t.path, t.at, 1, true)
		if err != nil {
			return placed(err)
		}
		what := fmt.Sprintf("%s byte %d bit %d (page %d)", f.Path, t.at, f.Bit, pageNo)
		df.Flips = append(df.Flips, disk.Flip{Off: off, Mask: 1 << f.Bit, What: what})
		l.Logf("%s: bit %d of byte %d of %s flipped at rest on its %s volume: InnoDB meets it when it next reads page %d from disk (after a restart, or once the page has left the buffer pool)", f.Node, f.Bit, t.at, f.Path, t.volume.Name, pageNo)
		rec.Value = "flip " + what
	default:
		off, err := disk.Locate(t.path, t.page, t.pageN, false)
		if err != nil {
			return placed(err)
		}
		d := disk.Drop{Off: off, N: t.pageN, What: fmt.Sprintf("%s page %d (bytes %d+%d)", f.Path, pageNo, t.page, t.pageN)}
		verb := "lose-write"
		if f.Torn {
			d.Keep, verb = tornKeep, "torn"
			l.Logf("%s: the next write of page %d of %s will be torn: its first 4K written, the rest keeping its earlier content", f.Node, pageNo, f.Path)
		} else {
			l.Logf("%s: the next write of page %d of %s will be acknowledged and lost: the page keeps its earlier content", f.Node, pageNo, f.Path)
		}
		df.Drops = append(df.Drops, d)
		rec.Value = verb + " " + d.What
	}
	if err := disk.SetFaults(p, map[string]disk.Faults{t.volume.Device: df}); err != nil {
		return err
	}
	return l.Record(rec)
}

// placed makes bytes without a place on the device a user error: another
// --at may have one.
func placed(err error) error {
	if errors.Is(err, disk.ErrNotPlaced) {
		return hderr.User("--at: %v: give another --at", err)
	}
	return err
}

// ForGood marks, in DiskFaults, damage done that no heal undoes (a write
// lost or torn stays so on the device): status says the heal clears the rest.
const ForGood = "heal does not undo it"

// fileFaults are the file faults on a volume as status shows them.
func fileFaults(f disk.FaultStatus) []string {
	var out []string
	for _, fl := range f.Flips {
		out = append(out, "bit flipped in "+fl.What)
	}
	for _, d := range f.Drops {
		what := "lost"
		if d.Keep > 0 {
			what = "torn"
		}
		if d.Hit.IsZero() {
			out = append(out, fmt.Sprintf("next write of %s armed to be %s", d.What, what))
		} else {
			out = append(out, fmt.Sprintf("write of %s %s at %s, for good (%s)", d.What, what, d.Hit.UTC().Format("15:04:05"), ForGood))
		}
	}
	return out
}
