package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline"
)

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("validate", flag.ContinueOnError)
	against := flags.String("against-state", "", "print what a run would do with the state each pipeline has under DIR")
	backfill := flags.Bool("backfill", false, "with --against-state: check that a run with --backfill would rebuild the refused operators")
	var reset []string
	flags.Func("reset-state", "show OPERATOR starting empty (repeatable)", func(v string) error {
		reset = append(reset, v)
		return nil
	})
	if code := parseFlags(flags, args, validateUsage, stdout, stderr); code >= 0 {
		return code
	}
	args = flags.Args()
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
	code := 0
	for _, p := range ps {
		fmt.Fprintln(stdout, secrets.Redact(fmt.Sprintf("%s: pipeline %s is valid", p.Spec.File, p.Name())))
		for _, w := range p.Plan.StateWarnings() {
			fmt.Fprintln(stderr, secrets.Redact(w))
		}
		if *against == "" {
			continue
		}
		if err := printAgainstState(stdout, *against, p, reset, *backfill); err != nil {
			fmt.Fprintln(stderr, secrets.Redact(err.Error()))
			code = 1
		}
	}
	return code
}

// printAgainstState prints what a run of p would do with the state its
// newest checkpoint under stateDir holds, node by node, and returns the
// refusal a run would meet.
func printAgainstState(w io.Writer, stateDir string, p *pipeline.Pipeline, reset []string, backfill bool) error {
	if _, err := os.Stat(filepath.Join(stateDir, p.Name())); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "pipeline %s: no state under %s: every operator starts empty\n", p.Name(), stateDir)
		return nil
	}
	store, err := checkpoint.OpenExisting(stateDir, p.Name())
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name(), err)
	}
	cp, err := store.Latest()
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name(), err)
	}
	if cp == nil {
		fmt.Fprintf(w, "pipeline %s: no checkpoint in %s: every operator starts empty\n", p.Name(), store.Dir())
		return nil
	}
	vs, err := p.StateVerdicts(cp, reset)
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name(), err)
	}
	fmt.Fprintf(w, "pipeline %s against checkpoint %d of %s:\n", p.Name(), cp.ID, store.Dir())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	refused := 0
	for _, v := range vs {
		if v.Optional && v.Action == pipeline.StateFresh {
			continue
		}
		why := v.Why
		if v.From != "" && v.From != v.ID {
			why = fmt.Sprintf("from %s; %s", v.From, why)
		}
		if v.Action == pipeline.StateRefuse && v.Pos != "" {
			why = v.Pos + ": " + why
		}
		action := string(v.Action)
		if v.Action == pipeline.StateMigrate && v.Change != "" {
			action += " (" + v.Change + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", action, v.ID, why)
		if v.Action == pipeline.StateRefuse {
			refused++
		}
	}
	tw.Flush()
	if refused > 0 && (backfill || p.Spec.Backfill) {
		// What the backfill checks before it reads anything; the replay
		// itself may still fail (a topic's retention, a sink's write).
		if err := p.CheckBackfill(stateDir); err != nil {
			return fmt.Errorf("pipeline %s: %w", p.Name(), err)
		}
		fmt.Fprintf(w, "pipeline %s: a run with --backfill rebuilds the %d refused operators from the sources' start up to checkpoint %d's positions\n", p.Name(), refused, cp.ID)
		if err := p.BackfillRanged(); err != nil {
			fmt.Fprintf(w, "pipeline %s: the daemon stops the running version while it backfills: %v\n", p.Name(), err)
		} else {
			fmt.Fprintf(w, "pipeline %s: the daemon backfills beside the running version, which it stops only to catch up\n", p.Name())
		}
		return nil
	}
	if refused > 0 {
		return fmt.Errorf("pipeline %s: %d of its operators refuse the saved state: a run would stop; see `etld run --reset-state`", p.Name(), refused)
	}
	return nil
}
