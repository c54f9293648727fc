package disk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// Cut is a file a fault truncated: the bytes it lost are kept aside, so
// that heal can give them back.
type Cut struct {
	Node string    `json:"node"`
	File string    `json:"file"` // as the fault named it
	Path string    `json:"path"`
	From int64     `json:"from"` // its size before
	To   int64     `json:"to"`   // its size after
	Tail string    `json:"tail"` // holds bytes [To, From)
	At   time.Time `json:"at"`
}

func cutsDir(p *plan.Plan) string   { return filepath.Join(filepath.Dir(p.Disks.Config), "cuts") }
func cutsIndex(p *plan.Plan) string { return filepath.Join(cutsDir(p), "cuts.json") }

// Cuts are the truncations heal has not undone yet.
func Cuts(p *plan.Plan) ([]Cut, error) {
	if p.Disks == nil {
		return nil, nil
	}
	b, err := os.ReadFile(cutsIndex(p))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Cut
	return out, json.Unmarshal(b, &out)
}

// Truncate cuts a file to c.To bytes, its tail kept first (c.From is read
// from the file).
func Truncate(p *plan.Plan, c Cut) (Cut, error) {
	cuts, err := Cuts(p)
	if err != nil {
		return c, err
	}
	if err := os.MkdirAll(cutsDir(p), 0o700); err != nil {
		return c, err
	}
	f, err := os.OpenFile(c.Path, os.O_RDWR, 0)
	if err != nil {
		return c, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return c, err
	}
	c.From = st.Size()
	if c.To >= c.From {
		return c, fmt.Errorf("%s is %d bytes: nothing to cut at %d", c.File, c.From, c.To)
	}
	tail, err := os.CreateTemp(cutsDir(p), c.Node+"-*.tail")
	if err != nil {
		return c, err
	}
	c.Tail = tail.Name()
	_, err = io.Copy(tail, io.NewSectionReader(f, c.To, c.From-c.To))
	if cerr := tail.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Truncate(c.To)
	}
	if err != nil {
		os.Remove(c.Tail)
		return c, fmt.Errorf("truncating %s: %w", c.File, err)
	}
	return c, saveCuts(p, append(cuts, c))
}

func saveCuts(p *plan.Plan, cuts []Cut) error {
	if len(cuts) == 0 {
		return os.RemoveAll(cutsDir(p))
	}
	b, err := json.MarshalIndent(cuts, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(cutsIndex(p), b, 0o600)
}

// Uncut gives every truncated file its tail back when it still has the
// size the cut left (a file written or cut again since is left as it is,
// and said). It returns what it did, a line each, and forgets the cuts.
func Uncut(p *plan.Plan) ([]string, error) {
	cuts, err := Cuts(p)
	if err != nil || len(cuts) == 0 {
		return nil, err
	}
	var said []string
	var errs []error
	for i := len(cuts) - 1; i >= 0; i-- { // the last cut first: an earlier one's size is what the later left
		c := cuts[i]
		switch st, err := os.Stat(c.Path); {
		case err != nil:
			said = append(said, fmt.Sprintf("%s: %s not given its bytes back: %v", c.Node, c.File, err))
		case st.Size() != c.To:
			said = append(said, fmt.Sprintf("%s: %s not given its bytes back: it is %d bytes now, not the %d the cut left (it was written since)", c.Node, c.File, st.Size(), c.To))
		default:
			if err := appendFile(c.Path, c.Tail); err != nil {
				errs = append(errs, fmt.Errorf("%s: giving %s its bytes back: %w", c.Node, c.File, err))
				continue
			}
			said = append(said, fmt.Sprintf("%s: %s has its %d cut bytes back", c.Node, c.File, c.From-c.To))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, saveCuts(p, nil))
	}
	return said, errors.Join(errs...)
}

func appendFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
