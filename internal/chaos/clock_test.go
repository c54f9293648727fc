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
