package workload

import "testing"

func TestCompare(t *testing.T) {
	r := func(n int64, o string) row { return row{N: n, Origin: o} }
	for _, c := range []struct {
		name           string
		a, b           map[int]row
		acked          int
		diverged, lost int
	}{
		{"the same, every increment counted", map[int]row{0: r(2, "a"), 1: r(2, "b")}, map[int]row{0: r(2, "a"), 1: r(2, "b")}, 4, 0, 0},
		{"the same, each overwrote the other", map[int]row{0: r(1, "b")}, map[int]row{0: r(1, "b")}, 2, 0, 1},
		{"apart: each kept the other's last write", map[int]row{0: r(5, "b"), 1: r(3, "a")}, map[int]row{0: r(5, "a"), 1: r(3, "a")}, 10, 1, 2},
		{"apart in the count", map[int]row{0: r(4, "a")}, map[int]row{0: r(3, "a")}, 4, 1, 1},
		{"a row one of them lacks", map[int]row{0: r(1, "a")}, map[int]row{0: r(1, "a"), 1: r(0, "")}, 1, 1, 0},
		{"more counted than acknowledged is no loss", map[int]row{0: r(3, "a")}, map[int]row{0: r(3, "a")}, 2, 0, 0},
	} {
		d, l := compare(c.a, c.b, c.acked)
		if d != c.diverged || l != c.lost {
			t.Errorf("%s: diverged %d, lost %d; want %d, %d", c.name, d, l, c.diverged, c.lost)
		}
	}
}
