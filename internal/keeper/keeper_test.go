package keeper

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestReplicated(t *testing.T) {
	p := &plan.Plan{Lab: "t", Dir: "/h/labs/t", Channels: []plan.Channel{{Name: "dr", From: "db", To: "dr"}},
		Clusters: []plan.Cluster{{Name: "db", Kind: spec.KindGalera}, {Name: "dr", Kind: spec.KindStandalone},
			{Name: "ps", Kind: spec.KindPrimary}, {Name: "solo", Kind: spec.KindGalera}}}
	for i, want := range []bool{true, false, true, false} {
		if got := Replicated(p, &p.Clusters[i]); got != want {
			t.Errorf("%s: replicated %v, want %v", p.Clusters[i].Name, got, want)
		}
	}
	plan.Complete(p)
	d := Daemon(p, "/h", "/bin/hadrill")
	if d.Marker != "--lab-dir /h/labs/t" || d.Dir != "/h/labs/t/keeper" || d.Argv[len(d.Argv)-1] != "/h/labs/t" {
		t.Errorf("keeper daemon %+v", d)
	}
}

func TestStamped(t *testing.T) {
	var b strings.Builder
	w := Stamped(&b)
	fmt.Fprintf(w, "one\ntwo\n")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "Z one") || !strings.HasSuffix(lines[1], "Z two") || lines[0][4] != '-' {
		t.Errorf("stamped %q", b.String())
	}
}
