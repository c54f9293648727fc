package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

func TestParseClock(t *testing.T) {
	for _, c := range []struct {
		offset, drift, spec, label string
	}{
		{"+60s", "", "+60", "+1m0s"},
		{"-5m", "", "-300", "-5m0s"},
		{"1.5s", "500ppm", "+1.5 x1.0005", "+1.5s, drift +500ppm"},
		{"0", "-200ppm", "+0 x0.9998", "drift -200ppm"},
	} {
		f, err := ParseClock("db2", c.offset, c.drift)
		if err != nil || f.Spec() != c.spec || f.String() != c.label {
			t.Errorf("%s %s: %q %q %v, want %q %q", c.offset, c.drift, f.Spec(), f.String(), err, c.spec, c.label)
		}
		if back := ParseSpec("db2", f.Spec()); back != f {
			t.Errorf("%q read back as %+v, want %+v", f.Spec(), back, f)
		}
	}
	_, err := ParseClock("db2", "soon", "fast")
	for _, w := range []string{`OFFSET: expected a signed duration such as +30s, -5m or 0, got "soon"`, `--drift: expected parts per million such as 500ppm or -200ppm, got "fast"`} {
		if !hderr.IsUser(err) || !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from %v", w, err)
		}
	}
	if _, err := ParseClock("db2", "", ""); err == nil || !strings.Contains(err.Error(), "give the clock's offset") {
		t.Errorf("nothing asked: %v", err)
	}
	if _, err := ParseClock("db2", "+9000h", ""); err == nil || !strings.Contains(err.Error(), "at most a year") {
		t.Errorf("a huge offset: %v", err)
	}
	if !ParseSpec("db2", "+0").IsZero() || (Clock{Offset: time.Second}).IsZero() {
		t.Error("IsZero")
	}
}

// TestParseStrobe: --strobe takes a period of a second to an hour and an
// offset to move to, no drift; every problem named with the offset's.
func TestParseStrobe(t *testing.T) {
	c, err := ParseClock("db1", "-12s", "")
	if f, err := ParseStrobe(c, err, ""); err != nil || f.Strobe != 0 {
		t.Errorf("no strobe: %+v %v", f, err)
	}
	f, err := ParseStrobe(c, err, "3s")
	if err != nil || f.Strobe != 3*time.Second || f.String() != "-12s, strobing to the real time and back every 3s" || f.IsZero() {
		t.Errorf("strobe: %+v %q %v", f, f.String(), err)
	}
	for _, c := range []struct{ offset, drift, period, want string }{
		{"+5s", "", "1s", `--strobe: expected a period of 2s to 1h (libfaketime reads the clock about every 2 s), got "1s"`},
		{"+5s", "", "often", `--strobe: expected a period of 2s to 1h`},
		{"+5s", "100ppm", "2s", "--strobe: moves the clock between OFFSET and the real time; it takes no --drift"},
		{"0", "", "2s", "OFFSET: a strobe moves the clock between an offset and the real time"},
		{"soon", "", "0.1s", `OFFSET: expected a signed duration`},
		{"soon", "", "0.1s", `--strobe: expected a period`},
	} {
		clk, err := ParseClock("db1", c.offset, c.drift)
		if _, err := ParseStrobe(clk, err, c.period); !hderr.IsUser(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s --strobe %s: %v, want %q", c.offset, c.drift, c.period, err, c.want)
		}
	}
}
