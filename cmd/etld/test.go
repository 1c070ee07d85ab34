package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/pipetest"
	"github.com/etld/etld/pipeline/spec"
)

type testFlags struct {
	fs      *flag.FlagSet
	run     string
	timeout time.Duration
}

func newTestFlags() *testFlags {
	f := &testFlags{fs: flag.NewFlagSet("test", flag.ContinueOnError)}
	f.fs.StringVar(&f.run, "run", "", "")
	f.fs.DurationVar(&f.timeout, "timeout", time.Minute, "")
	return f
}

// cmdTest runs the pipelines' unit tests. Exit 0: every test passed; 1: a
// test failed; 2: a usage error (a --run that matches no test among
// them), or a file (or its tests) did not load.
// Every file is tried, so that one broken file hides no failure in the
// others.
func cmdTest(args []string, stdout, stderr io.Writer) int {
	f := newTestFlags()
	if code := parseFlags(f.fs, args, testUsage, stdout, stderr); code >= 0 {
		return code
	}
	if f.timeout <= 0 {
		fmt.Fprintf(stderr, "etld test: --timeout: want a duration above 0, got %s\n", f.timeout)
		return 2
	}
	var only *regexp.Regexp
	if f.run != "" {
		var err error
		if only, err = regexp.Compile(f.run); err != nil {
			fmt.Fprintf(stderr, "etld test: --run: %v\n", err)
			return 2
		}
	}
	paths := f.fs.Args()
	if len(paths) == 0 {
		paths = []string{"."}
	}
	files, err := pipeline.Files(paths)
	if err != nil {
		fmt.Fprintf(stderr, "etld test: %v\n", err)
		return 2
	}
	// The values of ${VAR} never reach the output: not in an error, not
	// in a row of a diff (a SQL literal may have come from a variable).
	secrets := secretsOf(paths)
	for _, file := range files {
		if data, err := os.ReadFile(spec.TestFile(file)); err == nil {
			secrets.AddFrom(data, os.LookupEnv)
		}
	}
	out := &redactingWriter{w: stdout, redact: secrets.Redact}
	var passed, failed, untested, broken, tests int
	for _, file := range files {
		suite, err := loadSuite(file, f.timeout)
		if err != nil {
			fmt.Fprintln(stderr, secrets.Redact(err.Error()))
			reportPanic(stderr, err, secrets)
			broken++
			continue
		}
		if suite.Len() == 0 {
			fmt.Fprintf(out, "?    %s: no tests\n", file)
			untested++
			continue
		}
		tests += suite.Len()
		results := suite.Run(context.Background(), only)
		if len(results) == 0 {
			continue // --run matches none of its tests
		}
		fmt.Fprintf(out, "%s (%s)\n", suite.TestsFile, suite.Pipeline)
		for _, r := range results {
			pipetest.Write(out, r)
			if r.Passed() {
				passed++
			} else {
				failed++
			}
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if untested > 0 {
		summary += fmt.Sprintf(", %d %s without tests", untested, plural(untested, "pipeline"))
	}
	if broken > 0 {
		summary += fmt.Sprintf(", %d %s did not load", broken, plural(broken, "file"))
	}
	switch {
	case only != nil && passed+failed == 0 && broken == 0:
		// A test renamed away from the pattern must not pass a CI step
		// that runs nothing.
		fmt.Fprintf(stderr, "etld test: --run %q matches none of the %d %s\n", f.run, tests, plural(tests, "test"))
		fmt.Fprintf(out, "\nERROR: %s, none matches --run\n", summary)
		return 2
	case broken > 0:
		fmt.Fprintf(out, "\nERROR: %s\n", summary)
		return 2
	case failed > 0:
		fmt.Fprintf(out, "\nFAIL: %s\n", summary)
		return 1
	}
	fmt.Fprintf(out, "\nPASS: %s\n", summary)
	return 0
}

// loadSuite loads one file's tests; a panic in a constructor is an error
// like the others, as in load.
func loadSuite(file string, timeout time.Duration) (s *pipetest.Suite, err error) {
	defer panics.Recover(&err)
	return pipetest.Load(file, pipetest.Env{Registry: registry(), Timeout: timeout})
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// redactingWriter scrubs each write of the values of ${VAR}s. The
// results are written a line at a time, so a secret is never cut in two.
type redactingWriter struct {
	w      io.Writer
	redact func(string) string
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
