package facts

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Installed names what this computer runs, as a study's run records it
// beside the document's own set-up: the server, Galera, the load tools,
// the operating system and its kernel. A program not installed is left out.
type Installed struct {
	Server   string `json:"server,omitempty"`   // "MariaDB 10.11.19"
	Galera   string `json:"galera,omitempty"`   // "26.4.23" (the provider library's version)
	Sysbench string `json:"sysbench,omitempty"` // "1.0.20"
	Fio      string `json:"fio,omitempty"`      // "3.33"
	OS       string `json:"os,omitempty"`       // "Debian GNU/Linux 12 (bookworm)"
	Kernel   string `json:"kernel,omitempty"`   // "6.18.44"
}

// VersionIn is the first version number in s ("10.11.19", "3.33", "4"; ""
// without one).
var VersionIn = regexp.MustCompile(`\d+(\.\d+)*`).FindString

// InstalledHere reads what this computer runs (each program's own
// --version; Galera's from its Debian package).
func InstalledHere() Installed {
	run := func(argv ...string) string {
		b, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			return ""
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return line
	}
	in := Installed{
		Sysbench: VersionIn(run("sysbench", "--version")),
		Fio:      VersionIn(run("fio", "--version")),
		Galera:   VersionIn(run("dpkg-query", "-W", "-f", "${Version}", "galera-4")),
		OS:       osRelease("/etc/os-release"),
	}
	if v := VersionIn(run("mariadbd", "--version")); v != "" {
		in.Server = "MariaDB " + v
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		in.Kernel = VersionIn(string(b))
	}
	return in
}

// osRelease is an os-release file's PRETTY_NAME.
func osRelease(path string) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
