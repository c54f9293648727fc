package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/report"
)

func (cli *app) reportCmd() *cobra.Command {
	var out, pngDir string
	var asJSON bool
	c := &cobra.Command{
		Use:     "report RUN_ID... -o FILE.html [--png DIR]",
		Example: "  hadrill report 20261122-043611-8b7a 20261122-043631-0b8e -o report.html",
		Short:   "Write one self-contained HTML report (SVG charts, tables) of one or more runs",
		Args:    args(1, -1, "one or more run ids (see `hadrill runs list`)"),
		RunE: func(_ *cobra.Command, ids []string) error {
			if err := hderr.Join([]error{checkHTML(out), checkPNGDir(pngDir)}); err != nil {
				return err
			}
			h, err := cli.home()
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
				return hderr.User("--output: cannot write %s: %v", out, err)
			}
			if pngDir != "" {
				if err := rep.WritePNGs(pngDir); err != nil {
					return err
				}
			}
			abs, _ := filepath.Abs(out)
			summary := map[string]any{"report": abs, "runs": ids, "charts": len(rep.Charts)}
			if asJSON {
				return json.NewEncoder(os.Stdout).Encode(summary)
			}
			return cli.emit(summary, func() {
				fmt.Printf("report of %d run(s), %d charts: %s\n", len(ids), len(rep.Charts), abs)
			})
		},
	}
	htmlFlag(c, &out, "report.html")
	c.Flags().StringVar(&pngDir, "png", "", "also write each chart as PNG into this directory")
	c.Flags().BoolVar(&asJSON, "json", false, "print what was written as JSON (a report's -o is its HTML file)")
	return c
}

// checkPNGDir refuses a --png that names a file.
func checkPNGDir(dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return hderr.User("--png: %s is a file, expected a directory for the charts' PNG files", dir)
	}
	return nil
}

// htmlFlag declares a report command's -o/--output: the HTML file it
// writes. It is the command's own flag, in place of the global --output
// (text or json), which it shadows; --out is the same flag.
func htmlFlag(c *cobra.Command, out *string, def string) {
	c.Flags().StringVarP(out, "output", "o", def, "the HTML file to write")
	c.Flags().StringVar(out, "out", def, "the HTML file to write (as -o)")
	_ = c.Flags().MarkHidden("out")
}

// checkHTML refuses a report file that is missing or is an output format.
func checkHTML(out string) error {
	switch out {
	case "":
		return hderr.User("--output: required (the HTML file to write, -o FILE.html)")
	case "text", "json":
		return hderr.User("--output: a report's -o is the HTML file it writes (e.g. -o report.html), not a format; got %q (--json prints what was written as JSON)", out)
	}
	return nil
}
