package consistency

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// BenchmarkCheck times reading and checking histories of 1,000,000
// operations whose keys retire after 100 appends, as the list-append
// workload's do: valid, one read in twenty stale, and from 200 clients.
// (go test -run - -bench Check -benchtime 1x ./internal/consistency)
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct {
		name  string
		procs int
		stale bool
	}{{"valid", 10, false}, {"stale", 10, true}, {"wide", 200, false}} {
		b.Run(c.name, func(b *testing.B) {
			var file bytes.Buffer // made once, before b.Loop starts the clock
			if err := Write(&file, SimulateKeys(500_000, c.procs, 100, 100, c.stale, 1)); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				ops, err := Read(bytes.NewReader(file.Bytes()), all...)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Check(context.Background(), ops, "strict-serializable"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(1_000_000*b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}

// TestReadFastAndCareful: a history read on the fast path (scanOp, lists
// shared along each key's chain) is the history read line by line with
// care (readOp), whatever its shape: list-append, stale reads, keys
// retired, times in nanoseconds since 1970, nodes and errors.
func TestReadFastAndCareful(t *testing.T) {
	for _, ops := range [][]Op{
		SimulateKeys(2000, 10, 5, 20, true, 3),
		Simulate(500, 200, 3, false, 4),
		func() []Op {
			ops := Simulate(200, 4, 2, true, 5)
			for i := range ops {
				ops[i].Time += 1_764_300_000_000_000_000
				ops[i].Node, ops[i].Error = []string{"db1", "db2"}[i%2], 1213*(i%3/2)
			}
			return ops
		}(),
	} {
		var file bytes.Buffer
		if err := Write(&file, ops); err != nil {
			t.Fatal(err)
		}
		fast, err := Read(bytes.NewReader(file.Bytes()), all...)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(file.String()), "\n") {
			want, err := readOp(line, i, newFamilies(all))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fast[i], want) {
				t.Fatalf("line %d: fast %+v, careful %+v", i+1, fast[i], want)
			}
		}
	}
}

// TestListsShareNoRoom: lists cut from one key's chain, or from the
// arena, never see an append to another.
func TestListsShareNoRoom(t *testing.T) {
	a := &arenas{}
	short := a.list(1, []int{1, 2})
	long := a.list(1, []int{1, 2, 3})
	odd := a.list(1, []int{2})
	other := a.list(2, []int{7})
	grown := append(short, 9)
	_ = append(odd, 9)
	if !slices.Equal(long, []int{1, 2, 3}) || !slices.Equal(grown, []int{1, 2, 9}) || !slices.Equal(other, []int{7}) || !slices.Equal(a.list(1, []int{1, 2, 3, 4}), []int{1, 2, 3, 4}) {
		t.Errorf("short %v, long %v, other %v, grown %v", short, long, other, grown)
	}
	if e := a.list(3, nil); e == nil || len(e) != 0 {
		t.Errorf("an empty read: %#v", e)
	}
}

// TestEdgesFitTheirRoom: the room made for the graph's edges before they
// are drawn (edgesAtMost; real time's are counted by the sweep that draws
// them) holds every edge, so the largest slice of a check is never grown
// by copying; a new kind of edge must be counted there too.
func TestEdgesFitTheirRoom(t *testing.T) {
	for _, ops := range [][]Op{
		SimulateKeys(5000, 10, 20, 50, false, 1),
		SimulateKeys(5000, 10, 20, 50, true, 2),
		Simulate(2000, 200, 5, true, 3),
	} {
		c, err := analyse(context.Background(), ops)
		if err != nil {
			t.Fatal(err)
		}
		others := 0 // real time's are counted by the sweep that draws them
		for _, d := range c.g.deps {
			if d.kind != realtime {
				others++
			}
		}
		if room := c.edgesAtMost(); others > room {
			t.Errorf("%d edges other than real time's, room made for %d", others, room)
		}
	}
}

// TestReadInChunks: a history read in chunks of a few lines, by several
// parsers at once, is the history read in one chunk — its operations in
// order, a missing index its place among them, and its problems, each
// with its line, in the order of their lines.
func TestReadInChunks(t *testing.T) {
	var file bytes.Buffer
	if err := Write(&file, SimulateKeys(1500, 10, 5, 20, true, 7)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(file.String()), "\n")
	for i := range lines {
		if i%97 == 5 { // no index: its place among the operations is its index
			lines[i] = regexp.MustCompile(`"index":-?[0-9]+,`).ReplaceAllString(lines[i], "")
		}
	}
	good := strings.Join(lines, "\n") + "\n"
	bad := strings.Join(append(append([]string{}, lines[:500]...), append([]string{"", "{nope", `{"index":1,"time":1,"process":0,"type":"invoke","f":"withdraw","value":1}`}, lines[500:]...)...), "\n")
	defer func(c int) { readChunk = c }(readChunk)
	for _, text := range []string{good, bad} {
		readChunk = 1 << 30
		want, wantErr := Read(strings.NewReader(text), ListAppendOps)
		for _, chunk := range []int{1, 300, 4096} {
			readChunk = chunk
			got, err := Read(strings.NewReader(text), ListAppendOps)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("chunks of %d bytes: %d operations, %v; in one chunk %d, %v", chunk, len(got), err, len(want), wantErr)
			}
		}
		if text == good && (wantErr != nil || len(want) != len(lines) || want[5].Index != 5 || want[102].Index != 102) {
			t.Fatalf("read: %d operations of %d lines, %v", len(want), len(lines), wantErr)
		}
		if text == bad && (wantErr == nil || !strings.Contains(wantErr.Error(), "line 502: ") || !strings.Contains(wantErr.Error(), "line 503: ")) {
			t.Errorf("bad lines: %v", wantErr)
		}
	}
}

// TestLevelComponents: the components searched side by side are those
// each level's classification asks for, searched one after the other.
func TestLevelComponents(t *testing.T) {
	for _, ops := range [][]Op{
		SimulateKeys(5000, 10, 20, 50, true, 2),
		Simulate(2000, 200, 5, true, 3),
		Simulate(300, 4, 2, true, 5),
	} {
		c, err := analyse(context.Background(), ops)
		if err != nil {
			t.Fatal(err)
		}
		g := c.g
		all := g.components(ww | wr | rw | process | realtime)
		got := g.levelComponents(all)
		for l, lv := range levels {
			d := g.components(ww | wr | rw | lv.order)
			if !g.cyclic(d) {
				if got[l].d != nil || got[l].r != nil || got[l].w != nil {
					t.Errorf("level %q has no cycle but components were kept", lv.suffix)
				}
				continue
			}
			r := g.components(ww | wr | lv.order)
			w := r
			if g.cyclic(r) {
				w = g.components(ww | lv.order)
			}
			if !slices.Equal(got[l].d, d) || !slices.Equal(got[l].r, r) || !slices.Equal(got[l].w, w) {
				t.Errorf("level %q: components differ from those searched one at a time", lv.suffix)
			}
		}
	}
}
