package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// StrobeFile holds a node's clock strobe while one is in force: the lab's
// keeper writes the node's clock file from it, the offset and the real time
// in turn (libfaketime reads that file again about every 2 s: MinStrobe).
func StrobeFile(n *plan.Node) string { return filepath.Join(n.Dir, "clock.strobe") }

// MinStrobe is the shortest period a strobe may have: libfaketime reads
// its clock file again once its cache of a second has passed, at the
// server's next clock call: about every 2 s (measured), so a shorter
// period could be read in the same phase every time.
const MinStrobe = 2 * time.Second

// Strobe is a clock that moves between Spec (a clock file's offset, "+5")
// and the real time every Period, from Start (at Spec).
type Strobe struct {
	Spec   string
	Period time.Duration
	Start  time.Time
}

// Text is the strobe file's content: "SPEC PERIOD_S START_UNIX_NS".
func (s Strobe) Text() string {
	return fmt.Sprintf("%s %s %d\n", s.Spec, strconv.FormatFloat(s.Period.Seconds(), 'f', -1, 64), s.Start.UnixNano())
}

// ParseStrobe reads a strobe file back (false: not one).
func ParseStrobe(text string) (Strobe, bool) {
	f := strings.Fields(text)
	if len(f) != 3 {
		return Strobe{}, false
	}
	period, err1 := strconv.ParseFloat(f[1], 64)
	start, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || period*float64(time.Second) < float64(MinStrobe) {
		return Strobe{}, false
	}
	return Strobe{Spec: f[0], Period: time.Duration(period * float64(time.Second)), Start: time.Unix(0, start)}, true
}

// At is what the clock file holds at t: Spec in the first period and every
// other one after it, the real time ("+0") in between.
func (s Strobe) At(t time.Time) string {
	if t.Before(s.Start) || (t.Sub(s.Start)/s.Period)%2 == 0 {
		return s.Spec
	}
	return "+0"
}

// LockClock holds a node's clock files against the keeper's strobe until
// unlock (a local node's: clock faults run on this computer only), so that
// a strobe and a fault or heal never write them at once.
func LockClock(n *plan.Node) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(n.Dir, "clock.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing lets the lock go
}
