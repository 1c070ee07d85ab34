package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// The usages, in one style: what the command does, Usage:, then its
// flags with two dashes. Each command prints its own on --help or -h;
// `etld --help` joins the commands and the run flags.

const runFlagsUsage = `Run flags:
  --log-level debug|info|warn|error  (default info)
  --log-format text|json             (default: text on a terminal, json otherwise)
  --quiet                            no summary and no progress line (one-shot)
  --state-dir DIR                    keep checkpoints and resume from them (one-shot: off by default)
  --checkpoint-interval DURATION     default checkpoint interval (10s)
  --reset-state OPERATOR             start that operator (state id, TRANSFORM/KIND#N, a transform's
                                     name, source/NAME, sink/NAME) empty although the state directory
                                     holds state for it; repeatable (one-shot)
  --backfill                         rebuild the operators an edit changed from the sources' start up
                                     to the saved positions, give upsert sinks only the rows that
                                     differ, then run on (one-shot; needs --state-dir)
  --shutdown-timeout DURATION        deadline of a graceful stop (30s); past it, exit 1
  --cpuprofile FILE                  write a CPU profile of the run (one-shot or daemon) for go tool pprof
  --memprofile FILE                  write a heap profile at exit, after a GC
`

const daemonFlagsUsage = `Daemon flags (each also ETLD_<NAME> in the environment; flag > env > file;
the daemon's --state-dir defaults to /var/lib/etld):
  --config FILE                      etld.yaml (or ETLD_CONFIG); runs the daemon
  --daemon                           run the daemon without a config file
  --pipelines DIR                    pipeline files (default /etc/etld/pipelines)
  --admin-address HOST:PORT          admin HTTP (default 127.0.0.1:9464)
  --admin-enabled true|false         serve /healthz /readyz /metrics /pipelines /ui
  --admin-token TOKEN                token for /ui and /pipelines, required beyond loopback
                                     (prefer ETLD_ADMIN_TOKEN: a flag shows in ps)
  --admin-pprof true|false           serve /debug/pprof/ behind the same token as /pipelines
                                     (default false)
`

const usage = `etld runs declarative ETL pipelines: sources, SQL transforms, sinks.

Usage:
  etld run [flags] FILE|DIR...       run pipelines once (bounded ones end with a summary)
  etld run --config FILE [flags]     run as a daemon over the pipelines directory
  etld run --daemon [flags]          the same with no config file (defaults, ETLD_*, flags)
  etld validate FILE|DIR...          check pipelines; exit 1 and list every error
  etld explain [flags] FILE|DIR...   print the plans with changelog modes and sink modes,
                                     --format text|json|dot|mermaid
  etld test [FILE|DIR...]            run the pipelines' unit tests (tests: sections, NAME_test.yaml)
  etld export flink [flags] FILE|DIR...  write the pipelines as Flink SQL scripts (-o, --k8s)
  etld state ls|show|dump STATE_DIR [PIPELINE [OPERATOR]]
                                     read a state directory: checkpoints, operators,
                                     an operator's state as rows (JSON or CSV)
  etld state reset STATE_DIR PIPELINE [OPERATOR] --pipeline FILE
                                     start a pipeline anew, its sources' Kafka group
                                     offsets or replication slot too; or one operator
  etld healthcheck [URL]             exit 0 when the admin /healthz answers 200
  etld version                       print the version, commit and Go version

` + runFlagsUsage + `
` + daemonFlagsUsage + `
Flags may come before or after the files; after --, every argument is a file.
Run 'etld COMMAND --help' for a command's usage.
`

const runUsage = `etld run runs pipelines: once over the named files, or as a daemon over
the pipelines directory. Bounded pipelines end with a summary; the first
SIGINT or SIGTERM drains in-flight rows and flushes the sinks within
--shutdown-timeout; past it, or at a second signal, etld logs per pipeline
what was not checkpointed and the checkpoint the next start resumes from
(nothing is lost), and exits 1. The daemon reloads the directory on SIGHUP.

Usage:
  etld run [flags] FILE|DIR...       run pipelines once (a directory means its *.yaml)
  etld run --config FILE [flags]     run as a daemon over the pipelines directory
  etld run --daemon [flags]          the same with no config file (defaults, ETLD_*, flags)

` + runFlagsUsage + `
` + daemonFlagsUsage

const validateUsage = `etld validate builds every pipeline and starts nothing: it connects to
nothing and writes nothing. It exits 1 and lists every error as
file:line:col: field.path: message.

Usage:
  etld validate [flags] FILE|DIR...  a directory means its *.yaml and *.yml files

Flags:
  --against-state DIR                also read each pipeline's newest checkpoint under DIR (a
                                     state directory) and print, per operator, source and sink,
                                     what a run would do with its state: keep, migrate, new,
                                     reset, drop or refuse (then exit 1), and why
  --reset-state OPERATOR             as etld run's: show that operator starting empty
  --backfill                         with --against-state: check that etld run --backfill (or the
                                     file's backfill: true) would rebuild the refused operators;
                                     exit 1 with the reasons when it would refuse
`

const explainUsage = `etld explain prints a pipeline's plan: each source's schema, each
transform's operators with their changelog mode and upsert key, and each
sink's mode. It starts nothing and connects to nothing.

Usage:
  etld explain [flags] FILE|DIR...   a directory means its *.yaml and *.yml files

Flags:
  --format text|json|dot|mermaid     (default text)
      text     the plan as indented text
      json     the plan as data: nodes (id, kind, schema, changelog mode,
               upsert key, sink mode, state id) and edges; one object for
               a FILE, an array for a DIR or several paths
      dot      a Graphviz digraph, e.g. | dot -Tsvg > plan.svg; several
               pipelines become one cluster each
      mermaid  a Mermaid flowchart LR, e.g. for a Markdown page; several
               pipelines become one subgraph each
`

const testUsage = `etld test runs the unit tests of pipelines: the tests: section of a
pipeline file, or NAME_test.yaml beside NAME.yaml. Each test feeds rows to
the sources and compares the changes (+I -U +U -D) or the final table each
sink receives with the expected ones, and the records a source set aside
with the expected dead letters. Sources (a lookup join's table too) and
sinks are replaced by in-memory ones: no Kafka, MySQL or Elasticsearch is
needed, nothing is written. It prints PASS or FAIL per test, a diff for
each failure and a summary, and exits 0 when every test passes, 1 when one
fails, 2 when a file or its tests cannot be loaded.

Usage:
  etld test [FILE|DIR...]            a directory means its pipelines (default .)

Flags:
  --run REGEXP                       run only the tests whose name matches;
                                     one that matches none is an error (exit 2)
  --timeout DURATION                 bound on one test's run, above 0 (default 1m)
`

const healthcheckUsage = `etld healthcheck GETs the admin server's /healthz and exits 0 when it
answers 200, 1 otherwise (the container HEALTHCHECK). Without a URL it
finds the admin address as the daemon does: --config or ETLD_CONFIG, then
ETLD_ADMIN_ADDRESS, then 127.0.0.1:9464.

Usage:
  etld healthcheck [--config FILE] [URL]

Flags:
  --config FILE                      daemon config file whose admin.address to check
`

const versionUsage = `etld version prints the version, the commit it was built from and the
Go version, read from the binary's build information.

Usage:
  etld version
`

// parseFlags parses args with fs. Flags may come before, between and
// after the other arguments (`etld run f.yaml --quiet`), which fs.Args
// then holds in their order; after --, every argument is one of them.
// On --help or -h it prints help to stdout and returns 0; on a wrong
// flag it prints the error and a pointer to the help to stderr and
// returns 2; otherwise it returns -1 and the command goes on.
func parseFlags(fs *flag.FlagSet, args []string, help string, stdout, stderr io.Writer) int {
	// The flag package's own messages name flags with one dash and list
	// them in its own format: the command prints its usage instead.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var rest []string
	for {
		err := fs.Parse(args)
		if err != nil {
			return flagError(fs, err, help, stdout, stderr)
		}
		if fs.NArg() == 0 {
			break
		}
		// The flag package stops at the first argument that is not a
		// flag, or after a "--" (then the last one it took).
		if taken := len(args) - fs.NArg(); taken > 0 && args[taken-1] == "--" {
			rest = append(rest, fs.Args()...)
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	// Hand the arguments to fs.Args, none of them read as a flag.
	_ = fs.Parse(append([]string{"--"}, rest...))
	return -1
}

// flagError reports an error of fs.Parse: see parseFlags.
func flagError(fs *flag.FlagSet, err error, help string, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, help)
		return 0
	}
	// Its errors name a flag with one dash ("-nope"), as typed or not.
	msg := strings.NewReplacer("defined: -", "defined: --", "argument: -", "argument: --", "flag -", "flag --").Replace(err.Error())
	fmt.Fprintf(stderr, "etld %s: %s\nRun 'etld %s --help' for usage.\n", fs.Name(), msg, fs.Name())
	return 2
}
