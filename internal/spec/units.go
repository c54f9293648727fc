package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ParseSize parses a byte size like 512M, 2G or 1048576 (binary units).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch strings.ToUpper(s[n-1:]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		case "T":
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > (1<<50)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

// MinRate and MaxRate bound the rate a spec or a fault may give a link or
// a NIC (8kbit to 100gbit): one rule for every place that takes one.
const (
	MinRate = 8e3
	MaxRate = 100e9
)

// ParseRate parses a bandwidth like 100mbit, 1gbit or 500kbit into bits per
// second, from MinRate to MaxRate.
func ParseRate(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseInt(strings.TrimSuffix(s, u.suffix), 10, 64)
			if err != nil || v <= 0 || v > MaxRate/u.mult || v*u.mult < MinRate {
				break
			}
			return v * u.mult, nil
		}
	}
	return 0, fmt.Errorf("bad rate %q", s)
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FormatRate renders bits per second the way a spec (and tc) writes them:
// 100mbit, 1gbit, 500kbit.
func FormatRate(bps int64) string {
	switch {
	case bps%1e9 == 0:
		return fmt.Sprintf("%dgbit", bps/1e9)
	case bps%1e6 == 0:
		return fmt.Sprintf("%dmbit", bps/1e6)
	case bps%1e3 == 0:
		return fmt.Sprintf("%dkbit", bps/1e3)
	}
	return fmt.Sprintf("%dbit", bps)
}
