package haproxy

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
)

// Events reads HAProxy's log (haproxy.cfg.tmpl logs at notice level with
// an ISO 8601 time, format iso) for the servers it marked down or up and
// the groups it left without a server. Lines without a time (what -db
// echoes as [WARNING] and [ALERT]) and any other line are skipped.
func Events(log []byte) []proxy.Event {
	var out []proxy.Event
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		stamp, msg, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			continue
		}
		if e, ok := event(msg); ok {
			e.At = at
			out = append(out, e)
		}
	}
	return out
}

var (
	serverLine   = regexp.MustCompile(`^Server ([^/ ]+)/(\S+) is (DOWN|UP|going DOWN for maintenance)(.*)$`)
	noServerLine = regexp.MustCompile(`^(?:proxy|backend) (\S+) has no server available!`)
	sessionsLeft = regexp.MustCompile(`(\d+) sessions active`)
	serversLeft  = regexp.MustCompile(`\. \d+ active and \d+ backup servers`)
)

// event reads one message of HAProxy's log.
func event(msg string) (proxy.Event, bool) {
	if m := noServerLine.FindStringSubmatch(msg); m != nil {
		return proxy.Event{Proxy: m[1], What: proxy.NoServer}, true
	}
	m := serverLine.FindStringSubmatch(msg)
	if m == nil {
		return proxy.Event{}, false
	}
	e := proxy.Event{Proxy: m[1], Server: m[2], What: proxy.Down}
	switch {
	case m[3] == "UP":
		e.What = proxy.Up
	case strings.HasPrefix(m[3], "going"):
		e.Reason = "maintenance"
	}
	if r, ok := strings.CutPrefix(m[4], ", reason: "); ok {
		e.Reason = reason(r)
	}
	if s := sessionsLeft.FindStringSubmatch(m[4]); s != nil && e.What == proxy.Down {
		e.Sessions, _ = strconv.Atoi(s[1])
	}
	return e, true
}

// reason is HAProxy's reason up to the check's duration or the counts of
// servers and sessions that follow it.
func reason(r string) string {
	if i := strings.Index(r, ", check duration:"); i >= 0 {
		r = r[:i]
	} else if loc := serversLeft.FindStringIndex(r); loc != nil {
		r = r[:loc[0]]
	}
	return strings.TrimSuffix(r, ".")
}
