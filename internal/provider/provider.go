// Package provider gives a lab its hosts. Nothing above it knows whether a
// host is a network namespace, an address on lo, or (later) a remote machine.
package provider

import (
	"context"
	"net"
)

// Provider creates and removes a lab's hosts and runs things on them.
type Provider interface {
	// Setup creates every host and network of the plan; it is idempotent.
	Setup(ctx context.Context) error
	// Teardown removes everything Setup created and ends any process left on
	// the lab's hosts; it is idempotent and works on a half-created lab.
	Teardown(ctx context.Context) error
	// Wrap returns argv made to run on host.
	Wrap(host string, argv []string) []string
	// Dial connects to addr from host.
	Dial(ctx context.Context, host, network, addr string) (net.Conn, error)
	// Kind names the provider for status output ("netns", "rootless").
	Kind() string
}
