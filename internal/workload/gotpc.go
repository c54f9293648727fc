package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// goTPC is go-tpc on the lab's client host: beside hadrill when that is
// this computer's hadrill (make deps installs it there); on another host
// (a lab over SSH), this computer's go-tpc copied beside hadrill's copy
// there, named by its content (a copy there is this one), unless it is
// there already.
func goTPC(ctx context.Context, l Lab) (string, error) {
	h := client(l)
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	local := filepath.Join(filepath.Dir(self), "go-tpc")
	missing := fmt.Errorf("go-tpc is not beside hadrill at %s (make deps installs go-tpc %s there)", local, tpcc.Version)
	if filepath.Dir(h.Exe()) == filepath.Dir(self) { // this computer's hadrill: the client host is this computer
		if _, err := h.Run(ctx, []string{"test", "-x", local}, nil); err != nil {
			return "", missing
		}
		return local, nil
	}
	f, err := os.Open(local)
	if err != nil {
		return "", missing
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	remote := filepath.Join(filepath.Dir(h.Exe()), "go-tpc-"+hex.EncodeToString(sum.Sum(nil))[:16])
	if _, err := h.Run(ctx, []string{"test", "-x", remote}, nil); err == nil {
		return remote, nil
	}
	data, err := os.ReadFile(local)
	if err != nil {
		return "", err
	}
	if err := h.WriteFile(ctx, remote, data, 0o700); err != nil {
		return "", fmt.Errorf("copying go-tpc to the client host %s: %w", h.Name(), err)
	}
	return remote, nil
}
