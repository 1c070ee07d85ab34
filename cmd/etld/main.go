// Command etld runs declarative ETL pipelines.
//
//	etld run FILE|DIR...       run pipelines once; bounded ones end with a summary
//	etld run --config FILE     run as a daemon: the pipelines dir, admin HTTP, signals
//	etld validate FILE|DIR...  check pipelines without starting anything
//	etld explain FILE          print a pipeline's plan and changelog modes
//	etld healthcheck [URL]     GET the admin /healthz (container HEALTHCHECK)
//	etld version               print the version
//
// main.go dispatches; oneshot.go, daemon.go, validate.go and
// healthcheck.go hold the commands, logging.go the logger and secrets.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `etld runs declarative ETL pipelines: sources, SQL transforms, sinks.

Usage:
  etld run [flags] FILE|DIR...       run pipelines once (bounded ones end with a summary)
  etld run --config FILE [flags]     run as a daemon over the pipelines directory
  etld run --daemon [flags]          the same with no config file (defaults, ETLD_*, flags)
  etld validate FILE|DIR...          check pipelines; exit 1 and list every error
  etld explain FILE                  print the plan with changelog modes and sink modes
  etld healthcheck [URL]             exit 0 when the admin /healthz answers 200
  etld version                       print the version

Run flags:
  --log-level debug|info|warn|error  (default info)
  --log-format text|json             (default: text on a terminal, json otherwise)
  --quiet                            no summary and no progress line (one-shot)
  --state-dir DIR                    keep checkpoints and resume from them (one-shot: off by default)
  --checkpoint-interval DURATION     default checkpoint interval (10s)

Daemon flags (each also ETLD_<NAME> in the environment; flag > env > file;
the daemon's --state-dir defaults to /var/lib/etld):
  --config FILE                      etld.yaml (or ETLD_CONFIG)
  --pipelines DIR                    pipeline files (default /etc/etld/pipelines)
  --admin-address HOST:PORT          admin HTTP (default 127.0.0.1:9464)
  --admin-enabled true|false         serve /healthz /readyz /metrics /pipelines
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "etld %s\n", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "etld: unknown command %q\n\n%s", args[0], usage)
	return 2
}
