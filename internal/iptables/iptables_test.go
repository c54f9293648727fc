package iptables

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"198.18.0.2": "198.18.0.2", "": `""`, "a b": `"a b"`, `say "hi"`: `"say \"hi\""`, `a\b`: `"a\\b"`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// ns runs each command in a network namespace of the test's own (its
// tables empty), as a host's runner would, and reads its rules.
type ns string

func newNS(t *testing.T) ns {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: a network namespace of its own")
	}
	if _, err := exec.LookPath("iptables-restore"); err != nil {
		t.Skip("no iptables-restore")
	}
	n := ns(fmt.Sprintf("hdt-ipt-%d", os.Getpid()))
	if out, err := exec.Command("ip", "netns", "add", string(n)).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", string(n)).Run() })
	return n
}

func (n ns) run(argv []string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", string(n)}, argv...)...).CombinedOutput()
	return string(out), err
}

// rules are a table's rules that name chain, as iptables -S prints them.
func (n ns) rules(t *testing.T, table, chain string) string {
	t.Helper()
	out, err := n.run([]string{"iptables", "-w", "-t", table, "-S"})
	if err != nil {
		t.Fatalf("iptables -S: %v: %s", err, out)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, chain) {
			got = append(got, l)
		}
	}
	return strings.Join(got, "\n")
}

func drop(addr string) []Rule { return []Rule{{"-s", addr, "-j", "DROP"}, {"-d", addr, "-j", "DROP"}} }

func TestAppendDeleteRemove(t *testing.T) {
	n := newNS(t)
	const c = "HDFAULT-t"
	if out, err := n.run(Append("filter", c, drop("198.18.0.2"), "INPUT", "OUTPUT")); err != nil {
		t.Fatalf("append: %v: %s", err, out)
	}
	// a second batch adds to the chain; the jumps are there once
	if out, err := n.run(Append("filter", c, drop("198.18.0.3"), "INPUT", "OUTPUT")); err != nil {
		t.Fatalf("second append: %v: %s", err, out)
	}
	want := `-N HDFAULT-t
-A INPUT -j HDFAULT-t
-A OUTPUT -j HDFAULT-t
-A HDFAULT-t -s 198.18.0.2/32 -j DROP
-A HDFAULT-t -d 198.18.0.2/32 -j DROP
-A HDFAULT-t -s 198.18.0.3/32 -j DROP
-A HDFAULT-t -d 198.18.0.3/32 -j DROP`
	if got := n.rules(t, "filter", c); got != want {
		t.Fatalf("after two batches:\n%s\nwant\n%s", got, want)
	}

	// a batch with a bad rule changes nothing, and says why
	bad := append(drop("198.18.0.4"), Rule{"-d", "198.18.0.4/40", "-j", "DROP"})
	if out, err := n.run(Append("filter", c, bad, "INPUT")); err == nil || !strings.Contains(out, "mask") {
		t.Errorf("a bad batch: %v: %s", err, out)
	}
	if got := n.rules(t, "filter", c); got != want {
		t.Errorf("a failed batch changed the rules:\n%s", got)
	}
	// a delete of a rule that is not there deletes none
	if out, err := n.run(Delete("filter", c, append(drop("198.18.0.2"), drop("198.18.0.9")...))); err == nil {
		t.Errorf("deleting a missing rule: no error: %s", out)
	}
	if got := n.rules(t, "filter", c); got != want {
		t.Errorf("a failed delete changed the rules:\n%s", got)
	}
	if out, err := n.run(Delete("filter", c, drop("198.18.0.3"))); err != nil {
		t.Fatalf("delete: %v: %s", err, out)
	}
	if got := n.rules(t, "filter", c); strings.Contains(got, "198.18.0.3") || !strings.Contains(got, "198.18.0.2") {
		t.Errorf("after deleting 198.18.0.3's rules:\n%s", got)
	}

	for range 2 { // the second finds nothing to remove
		if out, err := n.run(Remove("filter", c, "INPUT", "OUTPUT")); err != nil {
			t.Fatalf("remove: %v: %s", err, out)
		}
		if got := n.rules(t, "filter", c); got != "" {
			t.Errorf("after remove:\n%s", got)
		}
	}
}

// The WAN's queueing rules: another table, a target with options, a hook
// appended to (no jump asked for: the caller adds its own last).
func TestAppendMangle(t *testing.T) {
	n := newNS(t)
	const c = "HDNETEM-t"
	rules := []Rule{{"-s", "198.18.1.1", "-j", "NFQUEUE", "--queue-num", "3"}}
	if out, err := n.run(Append("mangle", c, rules, "PREROUTING")); err != nil {
		t.Fatalf("append: %v: %s", err, out)
	}
	want := "-N HDNETEM-t\n-A PREROUTING -j HDNETEM-t\n-A HDNETEM-t -s 198.18.1.1/32 -j NFQUEUE --queue-num 3"
	if got := n.rules(t, "mangle", c); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if out, err := n.run(Remove("mangle", c, "PREROUTING")); err != nil {
		t.Fatalf("remove: %v: %s", err, out)
	}
	if got := n.rules(t, "mangle", c); got != "" {
		t.Errorf("after remove:\n%s", got)
	}
}

func TestReplace(t *testing.T) {
	n := newNS(t)
	const c = "HDNETEM-r"
	q := Rule{"-s", "198.18.1.1", "-j", "NFQUEUE", "--queue-num", "3"}
	if out, err := n.run(Append("mangle", c, []Rule{q}, "PREROUTING")); err != nil {
		t.Fatalf("append: %v: %s", err, out)
	}
	tee := Rule{"-s", "198.18.1.1", "!", "-i", "lo", "-m", "statistic", "--mode", "random", "--probability", "0.25", "-j", "TEE", "--gateway", "198.18.1.2"}
	if out, err := n.run(Replace("mangle", c, []Rule{tee, q})); err != nil {
		t.Fatalf("replace: %v: %s", err, out)
	}
	want := "-N HDNETEM-r\n-A PREROUTING -j HDNETEM-r\n" +
		"-A HDNETEM-r -s 198.18.1.1/32 ! -i lo -m statistic --mode random --probability 0.25000000000 -j TEE --gateway 198.18.1.2\n" +
		"-A HDNETEM-r -s 198.18.1.1/32 -j NFQUEUE --queue-num 3"
	if got := n.rules(t, "mangle", c); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// back to the queue alone: the copy rule is gone, the jump stays
	if out, err := n.run(Replace("mangle", c, []Rule{q})); err != nil {
		t.Fatalf("replace: %v: %s", err, out)
	}
	if got := n.rules(t, "mangle", c); got != "-N HDNETEM-r\n-A PREROUTING -j HDNETEM-r\n-A HDNETEM-r -s 198.18.1.1/32 -j NFQUEUE --queue-num 3" {
		t.Errorf("after the second replace:\n%s", got)
	}
	if out, err := n.run(Remove("mangle", c, "PREROUTING")); err != nil {
		t.Fatalf("remove: %v: %s", err, out)
	}
}
