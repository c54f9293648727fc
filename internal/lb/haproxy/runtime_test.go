package haproxy

import (
	"fmt"
	"testing"
)

// `show stat` as HAProxy prints it: a writes backend whose first server is
// down (the first backup then takes the writes) and a reads backend of
// non-backup servers (all UP ones take reads); frontends and backends'
// own lines are left out.
func TestParseStat(t *testing.T) {
	csv := "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck\n" +
		"writes,FRONTEND,,,0,1,,,,,,,,,,,,OPEN,,,\n" +
		"writes,db1,0,0,0,1,,,,,,,,,,,,DOWN,1,1,0\n" +
		"writes,db2,0,0,3,4,,,,,,,,,,,,UP,1,0,1\n" +
		"writes,db3,0,0,0,0,,,,,,,,,,,,UP 1/2,1,0,1\n" +
		"writes,BACKEND,0,0,3,4,,,,,,,,,,,,UP,1,1,2\n" +
		"reads,db1,0,0,0,0,,,,,,,,,,,,MAINT,1,1,0\n" +
		"reads,db2,0,0,1,1,,,,,,,,,,,,UP,1,1,0\n" +
		"reads,db3,0,0,1,1,,,,,,,,,,,,UP 1/2,1,1,0\n"
	got, err := ParseStat(csv)
	if err != nil {
		t.Fatal(err)
	}
	want := "writes db1 DOWN false; writes db2 UP true; writes db3 UP 1/2 false; reads db1 MAINT false; reads db2 UP true; reads db3 UP 1/2 true; "
	s := ""
	for _, g := range got {
		s += fmt.Sprintf("%s %s %s %v; ", g.Proxy, g.Name, g.Status, g.Serving)
	}
	if s != want || got[1].Sessions != 3 || !got[1].Backup {
		t.Errorf("got\n%s\nwant\n%s (%+v)", s, want, got[1])
	}
	if _, err := ParseStat("Unknown command\n"); err == nil {
		t.Error("an answer without a header is not an error")
	}
}
