package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/report"
)

// reportFile is the HTML file named with `report -o FILE.html`.
var reportFile string

func reportCmd() *cobra.Command {
	var out, pngDir string
	c := &cobra.Command{
		Use:     "report RUN_ID... -o FILE.html [--png DIR]",
		Example: "  hadrill report 20261122-043611-8b7a 20261122-043631-0b8e -o report.html",
		Short:   "Write one self-contained HTML report (SVG charts, tables) of one or more runs",
		Args:    args(1, -1, "one or more run ids (see `hadrill runs list`)"),
		RunE: func(_ *cobra.Command, ids []string) error {
			if reportFile != "" {
				out = reportFile
			}
			if out == "" {
				return hderr.User("--out: required (the HTML file to write)")
			}
			h, err := home()
			if err != nil {
				return err
			}
			rep, err := report.Load(h, ids)
			if err != nil {
				return err
			}
			html, err := rep.HTML()
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, html, 0o644); err != nil {
				return hderr.User("--out: cannot write %s: %v", out, err)
			}
			if pngDir != "" {
				if err := rep.WritePNGs(pngDir); err != nil {
					return err
				}
			}
			abs, _ := filepath.Abs(out)
			return emit(map[string]any{"report": abs, "runs": ids, "charts": len(rep.Charts)}, func() {
				fmt.Printf("report of %d run(s), %d charts: %s\n", len(ids), len(rep.Charts), abs)
			})
		},
	}
	c.Flags().StringVar(&out, "out", "report.html", "the HTML file to write")
	c.Flags().StringVar(&pngDir, "png", "", "also write each chart as PNG into this directory")
	return c
}
