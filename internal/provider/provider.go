// Package provider gives a lab its hosts. Nothing above it knows whether a
// host is a network namespace, an address on lo, or a remote machine.
package provider

import (
	"context"
	"errors"
	"net"

	"github.com/hadrill/hadrill/internal/host"
)

// ErrForeign means the machine-wide names a lab would use belong to a lab of
// another home; teardown leaves them alone.
var ErrForeign = errors.New("owned by another lab")

// Provider creates and removes a lab's hosts and runs things on them.
type Provider interface {
	// Claim reserves the plan's machine-wide names for this lab, or says
	// (as bad input) who holds them. It is idempotent.
	Claim() error
	// Setup creates every host and network of the plan; it is idempotent.
	Setup(ctx context.Context) error
	// Teardown removes everything Setup created and ends any process left on
	// the lab's hosts; it is idempotent and works on a half-created lab.
	Teardown(ctx context.Context) error
	// Dial connects to addr from host.
	Dial(ctx context.Context, host, network, addr string) (net.Conn, error)
	// Host is one of the lab's hosts: its commands, files, daemons, dialing.
	Host(name string) host.Host
	// Kind names the provider for status output ("netns", "rootless").
	Kind() string
}
