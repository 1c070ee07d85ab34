// Command etld runs declarative ETL pipelines.
//
//	etld run FILE|DIR...       run pipelines once; bounded ones end with a summary
//	etld run --config FILE     run as a daemon: the pipelines dir, admin HTTP, signals
//	etld validate FILE|DIR...  check pipelines without starting anything
//	etld explain FILE|DIR...   print the plans: text, json, dot or mermaid
//	etld test [FILE|DIR...]    run the pipelines' unit tests
//	etld export flink FILE|DIR write the pipelines as Flink SQL scripts
//	etld state ls|show|dump    read a state directory: checkpoints, operators, their state
//	etld healthcheck [URL]     GET the admin /healthz (container HEALTHCHECK)
//	etld version               print the version, commit and Go version
//
// main.go dispatches; oneshot.go, daemon.go, validate.go, explain.go,
// test.go, state*.go, healthcheck.go and version.go hold the commands, usage.go their
// help, logging.go the logger and secrets.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/etld/etld/internal/heapfloor"
)

func main() {
	// A pipeline's live heap is small beside what it allocates: collect
	// less often while it is (internal/heapfloor; GOGC overrides it).
	heapfloor.Start(heapfloor.Default)
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
	case "test":
		return cmdTest(args[1:], stdout, stderr)
	case "export":
		return cmdExport(args[1:], stdout, stderr)
	case "state":
		return cmdState(args[1:], stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		if code := parseFlags(fs, args[1:], versionUsage, stdout, stderr); code >= 0 {
			return code
		}
		fmt.Fprint(stdout, buildVersion())
		return 0
	case "help", "--help", "-h":
		if len(args) > 1 {
			// etld help COMMAND is etld COMMAND --help.
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "etld: unknown command %q\n\n%s", args[0], usage)
	return 2
}
