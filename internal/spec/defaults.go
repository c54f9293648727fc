package spec

// DefaultRegion is the region every host lands in unless the spec says otherwise.
const DefaultRegion = "main"

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
			if c.Kind == KindGalera {
				n = 3
			}
			c.Nodes = &n
		}
		if c.Region == "" {
			c.Region = first
		}
		if c.Profile == "" {
			c.Profile = "default"
		}
		if c.FailureDetection == "" && c.Kind == KindGalera {
			c.FailureDetection = DetectionStock
		}
	}
	for i := range s.Replication {
		if s.Replication[i].Mode == "" {
			s.Replication[i].Mode = "async"
		}
	}
	for i := range s.LoadBalancers {
		lb := &s.LoadBalancers[i]
		if lb.Mode == "" {
			lb.Mode = "single-writer"
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
