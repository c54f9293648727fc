package netem

import (
	"math/rand/v2"
	"time"
)

// Lane decides, for the packets of one direction of one link as they
// arrive, when each is released or whether it is lost. Packets leave in the
// order they came (jitter never reorders them, as on a real path where a
// late packet holds the ones behind it): a release is never earlier than
// the one before it. Only a link's Reorder share breaks the order: such a
// packet is sent at once (ahead), overtaking those still delayed, as tc
// netem's reorder does.
type Lane struct {
	last time.Time
	rng  *rand.Rand
}

// NewLane returns a lane with its own random source.
func NewLane(seed uint64) *Lane {
	return &Lane{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Admit returns the release time of a packet that arrived at now, or
// drop=true when the link loses it, or ahead=true when it is sent at once
// out of order (release is then now).
func (l *Lane) Admit(k *Link, now time.Time) (release time.Time, drop, ahead bool) {
	if k.Loss > 0 && l.rng.Float64()*100 < k.Loss {
		return time.Time{}, true, false
	}
	if k.Reorder > 0 && l.rng.Float64()*100 < k.Reorder {
		return now, false, true
	}
	d := k.RTT / 2
	if k.Jitter > 0 {
		j := k.Jitter / 2
		d += time.Duration(l.rng.Int64N(int64(2*j)+1)) - j
		if d < 0 {
			d = 0
		}
	}
	release = now.Add(d)
	if release.Before(l.last) {
		release = l.last
	}
	l.last = release
	return release, false, false
}
