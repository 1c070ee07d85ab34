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
	}
	return 0
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	if code := parseFlags(fs, args, explainUsage, stdout, stderr); code >= 0 {
		return code
	}
	args = fs.Args()
	if len(args) != 1 {
		fmt.Fprintln(stderr, "etld explain: name one pipeline file")
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
		// The plan prints no connector options, but scrub it anyway: a
		// literal in the SQL may have come from a variable.
		fmt.Fprint(stdout, secrets.Redact(p.Explain()))
	}
	return 0
}
