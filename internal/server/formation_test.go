package server

import (
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestFormation(t *testing.T) {
	stock := &plan.Node{Name: "a", Cluster: "db", Kind: spec.KindGalera, ProviderOptions: "pc.recovery=true"}
	fast := &plan.Node{Name: "b", Cluster: "db", Kind: spec.KindGalera, ProviderOptions: "pc.recovery=true;evs.join_retrans_period=PT0.1S"}
	if got := configuredJoin(stock); got != "evs.join_retrans_period=PT1S" {
		t.Errorf("stock node restores %q", got)
	}
	if got := configuredJoin(fast); got != "evs.join_retrans_period=PT0.1S" {
		t.Errorf("fast node restores %q", got)
	}
	boot := &plan.Node{Name: "c", Cluster: "db", Kind: spec.KindGalera}
	extra := formationArgs([]*plan.Node{stock, boot}, map[string][]string{"c": {BootstrapFlag}})
	if !has(extra["a"], "--wsrep-provider-options=pc.recovery=true;"+formingJoin) {
		t.Errorf("forming node args: %v", extra["a"])
	}
	if len(extra["c"]) != 1 {
		t.Errorf("a bootstrapping node gets no forming options: %v", extra["c"])
	}
	stock.UserProviderOptions = true
	if extra := formationArgs([]*plan.Node{stock}, nil); len(extra["a"]) != 0 {
		t.Errorf("user's own provider options overridden: %v", extra["a"])
	}
}
