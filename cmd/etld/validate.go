package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
)

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	if code := parseFlags(fs, args, validateUsage, stdout, stderr); code >= 0 {
		return code
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "etld validate: name at least one pipeline file or directory")
		return 2
	}
	secrets := secretsOf(args)
	ps, err := load(args, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(stderr, secrets.Redact(err.Error()))
		reportPanic(stderr, err, secrets)
		return 1
	}
	for _, p := range ps {
		fmt.Fprintln(stdout, secrets.Redact(fmt.Sprintf("%s: pipeline %s is valid", p.Spec.File, p.Name())))
		for _, w := range p.Plan.StateWarnings() {
			fmt.Fprintln(stderr, secrets.Redact(w))
		}
	}
	return 0
}
