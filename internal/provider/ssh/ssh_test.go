package ssh

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/inventory"
)

func TestQuote(t *testing.T) {
	for argv, want := range map[string]string{
		"sh\x00-s\x00--\x00/var/lib/hadrill": "sh -s -- /var/lib/hadrill",
		"echo\x00a b":                        "echo 'a b'",
		"echo\x00it's":                       `echo 'it'\''s'`,
		"echo\x00":                           "echo ''",
		"echo\x00$HOME\x00`id`\x00*":         "echo '$HOME' '`id`' '*'",
	} {
		if got := Quote(strings.Split(argv, "\x00")); got != want {
			t.Errorf("Quote(%q) = %s, want %s", argv, got, want)
		}
	}
}

// TestQuoteThroughAShell: what a POSIX shell makes of a quoted command
// line is exactly the arguments quoted.
func TestQuoteThroughAShell(t *testing.T) {
	argv := []string{"printf", `%s\0`, "plain", "two words", "it's", `"double"`, "$(id)", "`id`", "a\nnewline", "back\\slash", "*", "", "-n", "ünï", "semi;colon", "&|<>"}
	out, err := exec.Command("sh", "-c", Quote(argv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if want := argv[2:]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the shell gave\n%q\nwant\n%q", got, want)
	}
}

func TestCommand(t *testing.T) {
	if got := Command(inventory.Host{Sudo: true}, []string{"id", "-u"}); got != "sudo -n -- id -u" {
		t.Errorf("sudo: %s", got)
	}
	if got := Command(inventory.Host{}, []string{"id", "-u"}); got != "id -u" {
		t.Errorf("root: %s", got)
	}
}

func TestReason(t *testing.T) {
	for stderr, want := range map[string]string{"": "", "one\n": "one", "warning: x\nE: Unable to locate package nosuch\n\n": "E: Unable to locate package nosuch"} {
		if got := (Result{Stderr: []byte(stderr)}).Reason(); got != want {
			t.Errorf("Reason(%q) = %q, want %q", stderr, got, want)
		}
	}
}

func TestSaid(t *testing.T) {
	stderr := "2026 [Note] starting\n\n2026 [ERROR] InnoDB: cannot lock\n2026 [ERROR] Aborting\n"
	for n, want := range map[int]string{1: "2026 [ERROR] Aborting", 2: "2026 [ERROR] InnoDB: cannot lock\n2026 [ERROR] Aborting", 10: "2026 [Note] starting\n2026 [ERROR] InnoDB: cannot lock\n2026 [ERROR] Aborting"} {
		if got := (Result{Stderr: []byte(stderr)}).Said(n); got != want {
			t.Errorf("Said(%d) = %q, want %q", n, got, want)
		}
	}
	if got := (Result{}).Said(3); got != "" {
		t.Errorf("nothing said: %q", got)
	}
}
