package haproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
)

// ServerState is one server line of `show stat`.
type ServerState = proxy.ServerState

// ParseStat reads `show stat` CSV output into server states, marking which
// servers take new connections.
func ParseStat(csv string) ([]ServerState, error) {
	sc := bufio.NewScanner(strings.NewReader(csv))
	var col map[string]int
	var out []ServerState
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			col = map[string]int{}
			for i, h := range strings.Split(strings.TrimPrefix(line, "# "), ",") {
				col[h] = i
			}
			continue
		}
		if col == nil || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, ",")
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(f) {
				return f[i]
			}
			return ""
		}
		if sv := get("svname"); sv == "FRONTEND" || sv == "BACKEND" {
			continue
		}
		sessions, _ := strconv.Atoi(get("scur"))
		out = append(out, ServerState{Proxy: get("pxname"), Name: get("svname"), Status: get("status"),
			Backup: get("bck") == "1", Sessions: sessions})
	}
	if col == nil {
		return nil, fmt.Errorf("show stat: no header in %q", firstLine(csv))
	}
	markServing(out)
	return out, nil
}

// markServing: per proxy, the UP active servers serve; with none, the first
// UP backup does (HAProxy without allbackups).
func markServing(servers []ServerState) {
	byProxy := map[string][]int{}
	var order []string
	for i, s := range servers {
		if _, seen := byProxy[s.Proxy]; !seen {
			order = append(order, s.Proxy)
		}
		byProxy[s.Proxy] = append(byProxy[s.Proxy], i)
	}
	for _, p := range order {
		any := false
		for _, i := range byProxy[p] {
			if !servers[i].Backup && up(servers[i].Status) {
				servers[i].Serving, any = true, true
			}
		}
		for _, i := range byProxy[p] {
			if !any && servers[i].Backup && up(servers[i].Status) {
				servers[i].Serving = true
				break
			}
		}
	}
}

// up: UP, or UP but failing its checks ("UP 1/2"), still takes traffic.
func up(status string) bool { return strings.HasPrefix(status, "UP") }

// Dialer connects to an address ("unix" and a path) from a HAProxy's host.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Stat asks a running HAProxy for its servers' states over its admin
// socket, dialed through its host.
func Stat(ctx context.Context, dial Dialer, socket string) ([]ServerState, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := dial(ctx, "unix", socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "show stat\n"); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return nil, err
	}
	return ParseStat(string(b))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Alive says whether a HAProxy answers on its admin socket within the
// context's time ("show info" names it).
func Alive(ctx context.Context, socket string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return err
	}
	defer c.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(deadline)
	}
	if _, err := io.WriteString(c, "show info\n"); err != nil {
		return err
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), "Name: HAProxy") {
		return fmt.Errorf("show info: unexpected answer %q", firstLine(string(b)))
	}
	return nil
}
