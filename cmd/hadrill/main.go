// Command hadrill deploys, loads, breaks and reports on MySQL/MariaDB
// high-availability labs. It is also the per-node daemons it places on hosts.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-sql-driver/mysql"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hadrill/hadrill/internal/hderr"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	_ = mysql.SetLogger(&mysql.NopLogger{}) // the driver's own logging would bypass our messages
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err))
}

// exitCode prints err and maps it: 0 ok, 2 bad input, 1 runtime failure.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "hadrill: interrupted; what was being created has been removed")
		return 1
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.TrimSpace(line) != "" {
			fmt.Fprintln(os.Stderr, "hadrill: "+line)
		}
	}
	if hderr.IsUser(err) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}
