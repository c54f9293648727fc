package spec

import "time"

// DefaultRegion is the region every host lands in unless the spec says otherwise.
const DefaultRegion = "main"

// ReplMode is how replicas follow their source.
type ReplMode string

// Replication modes of primary clusters and channels.
const (
	ModeAsync    ReplMode = "async"
	ModeSemiSync ReplMode = "semi-sync"
	// DefaultAckTimeout is how long a semi-sync commit waits for a replica
	// before falling back to async (MariaDB's own default).
	DefaultAckTimeout = "10s"
)

// Failover modes of primary clusters.
const (
	FailoverManual = "manual"
	FailoverAuto   = "auto"
	// DefaultFailoverMaxLag is how far behind the dead primary an
	// automatic failover may leave the cluster.
	DefaultFailoverMaxLag = "10s"
	// DefaultFailoverAfter is how long a running primary must be out of
	// its clients' and replicas' reach before it is failed over.
	DefaultFailoverAfter = "1s"
	// MinFailoverAfter is the least of it: two of the keeper's ticks.
	MinFailoverAfter = 500 * time.Millisecond
)

// Defaults fills every field the user may leave out. It never overrides what
// the user wrote, so validation still sees the user's mistakes.
func Defaults(s *Spec) {
	if len(s.Regions) == 0 {
		s.Regions = []Region{{Name: DefaultRegion}}
	}
	first := s.Regions[0].Name
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if c.Kind == "" {
			c.Kind = KindGalera
		}
		if c.Nodes == nil {
			n := 1
			switch c.Kind {
			case KindGalera:
				n = 3
			case KindPrimary:
				n = 2
			}
			c.Nodes = &n
		}
		if c.Region == "" && len(c.Regions) > 0 {
			c.Region = c.Regions[0]
		}
		if c.Region == "" {
			c.Region = first
		}
		if c.Arbitrator != nil && c.Arbitrator.Region == "" {
			c.Arbitrator.Region = c.Region
		}
		if c.Profile == "" {
			c.Profile = "default"
		}
		if c.FailureDetection == "" && c.Kind == KindGalera {
			c.FailureDetection = DetectionStock
		}
		if c.Kind == KindPrimary {
			if c.Mode == "" {
				c.Mode = ModeAsync
			}
			if c.AckTimeout == "" && c.Mode == ModeSemiSync {
				c.AckTimeout = DefaultAckTimeout
			}
			if c.Failover == "" {
				c.Failover = FailoverManual
			}
			if c.FailoverMaxLag == "" && c.Failover == FailoverAuto {
				c.FailoverMaxLag = DefaultFailoverMaxLag
			}
			if c.FailoverAfter == "" && c.Failover == FailoverAuto {
				c.FailoverAfter = DefaultFailoverAfter
			}
		}
	}
	for i := range s.Replication {
		ch := &s.Replication[i]
		if ch.Mode == "" {
			ch.Mode = ModeAsync
		}
		if ch.AckTimeout == "" && ch.Mode == ModeSemiSync {
			ch.AckTimeout = DefaultAckTimeout
		}
	}
	for i := range s.LoadBalancers {
		lb := &s.LoadBalancers[i]
		if lb.Mode == "" {
			lb.Mode = LBSingleWriter
		}
		if lb.Checks == "" {
			lb.Checks = LBChecksFast
		}
		if lb.Kind == "" {
			lb.Kind = LBKindHAProxy
		}
		if lb.Region == "" {
			lb.Region = regionOf(s, lb.Cluster, first)
		}
	}
	if s.Client == nil {
		s.Client = &Client{}
	}
	if s.Client.Name == "" {
		s.Client.Name = "client"
	}
	if s.Client.Region == "" {
		s.Client.Region = first
	}
}

func regionOf(s *Spec, cluster, fallback string) string {
	for _, c := range s.Clusters {
		if c.Name == cluster && c.Region != "" {
			return c.Region
		}
	}
	return fallback
}
