package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/etld/etld/pipeline/plan"
)

// explainFormats are the accepted values of explain --format, in the
// order the usage lists them.
var explainFormats = []string{"text", "json", "dot", "mermaid"}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	format := fs.String("format", "text", "text, json, dot or mermaid")
	if code := parseFlags(fs, args, explainUsage, stdout, stderr); code >= 0 {
		return code
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "etld explain: name at least one pipeline file or directory")
		return 2
	}
	known := false
	for _, f := range explainFormats {
		known = known || *format == f
	}
	secrets := secretsOf(args)
	if !known {
		fmt.Fprintf(stderr, "etld explain: unknown --format %q: want %s\nRun 'etld explain --help' for usage.\n",
			secrets.Redact(*format), strings.Join(explainFormats, ", "))
		return 2
	}
	ps, err := load(args, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(stderr, secrets.Redact(err.Error()))
		reportPanic(stderr, err, secrets)
		return 1
	}
	if *format == "text" {
		for i, p := range ps {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			// The plan prints no connector options, but scrub it anyway: a
			// literal in the SQL may have come from a variable.
			fmt.Fprint(stdout, secrets.Redact(p.Explain()))
			for _, w := range p.Plan.StateWarnings() {
				fmt.Fprintln(stderr, secrets.Redact(w))
			}
		}
		return 0
	}
	// The pictures escape what they draw, so the values of variables
	// are hidden before, in the data, where they are still as written.
	ds := make([]plan.Description, len(ps))
	for i, p := range ps {
		ds[i] = p.Describe().Redacted(secrets.Redact)
	}
	switch *format {
	case "json":
		// One file gives one object; a directory or several paths an
		// array, however many pipelines they hold, so that a script
		// reading them need not guess.
		var v any = ds
		if len(args) == 1 && !isDir(args[0]) {
			v = ds[0]
		}
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "etld explain: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s\n", out)
	case "dot":
		fmt.Fprint(stdout, plan.Dot(ds))
	case "mermaid":
		fmt.Fprint(stdout, plan.Mermaid(ds))
	}
	return 0
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
