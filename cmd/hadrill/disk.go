package main

import (
	"encoding/json"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
)

func (cli *app) diskCmd() *cobra.Command {
	var config, mount, ready string
	c := &cobra.Command{
		Use:   "disk --config FILE --mount DIR",
		Short: "Run a lab's disk emulator: cloud disks as files in a FUSE mount, each paced to its IOPS, throughput and latency (hadrill starts it)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cli.daemon.Store(true)
			if config == "" || mount == "" {
				return hderr.User("--config, --mount: both required")
			}
			b, err := os.ReadFile(config)
			if err != nil {
				return err
			}
			var specs []disk.Device
			if err := json.Unmarshal(b, &specs); err != nil {
				return hderr.User("--config: %v", err)
			}
			return disk.Serve(cmd.Context(), mount, specs, readyFile(ready))
		},
	}
	c.Flags().StringVar(&config, "config", "", "the disks (JSON)")
	c.Flags().StringVar(&mount, "mount", "", "where the disks appear as files")
	c.Flags().StringVar(&ready, "ready-file", "", "written with the daemon's pid once mounted")
	return c
}

// readyFile is a daemon's "ready" callback: it writes the daemon's pid into
// path (nothing when path is empty), which its starter waits for.
func readyFile(path string) func() {
	return func() {
		if path != "" {
			_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
		}
	}
}
