// Package buildinfo is what the build says of this binary.
package buildinfo

// Version is set at build time
// (-ldflags "-X github.com/hadrill/hadrill/internal/buildinfo.Version=...").
var Version = "dev"
