package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/human"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/redact"
)

const stateUsage = `etld state reads a state directory (--state-dir, the daemon's state_dir)
without running anything; ls, show and dump write nothing to it and may
run beside the daemon that keeps the state. reset starts a pipeline, or
one operator of it, anew; it refuses while a daemon holds the directory.

Usage:
  etld state ls STATE_DIR                    the pipelines with state: newest checkpoint, size
  etld state ls STATE_DIR PIPELINE           its kept checkpoints, and the operators of one
                                             (--checkpoint, default the newest)
  etld state ls STATE_DIR PIPELINE OPERATOR  the operator in each kept checkpoint
  etld state show STATE_DIR PIPELINE [OPERATOR]
                                             every part of a checkpoint (sources, operators,
                                             sinks), or one operator in full
  etld state dump STATE_DIR PIPELINE OPERATOR --pipeline FILE
                                             the operator's state as rows
  etld state reset STATE_DIR PIPELINE [OPERATOR] --pipeline FILE
                                             the whole pipeline: resets what its sources keep
                                             outside the state directory (a Kafka group's
                                             committed offsets, a PostgreSQL slot's position),
                                             then removes its state: the next run starts as its
                                             first did. An OPERATOR (or a transform's name: all
                                             of its operators): a new checkpoint in which it is
                                             empty; the sources keep their positions

An OPERATOR is named as ls lists it: TRANSFORM/KIND#N, the operator id of
/metrics (TRANSFORM is the transform's uid when it has one; KIND#N the Nth
operator of that kind in the transform, e.g. q/group_aggregate#1), or the
transform's name alone when it has one stateful operator. Checkpoints of
format 3 and before list TRANSFORM/N (N the steps down from the result).

Flags:
  --checkpoint ID                    the checkpoint to read (default the newest, the
                                     one a run restores)
  --pipeline FILE                    the pipeline file of the state: dump needs it to
                                     decode the state and name its columns, reset to know
                                     the sources and build empty operators; ls and show
                                     then also print each operator's plan and columns
  --format text|json                 ls and show (default text)
  --format json|csv                  dump (default json): one JSON object per line, or
                                     CSV with a header line
  --table NAME                       dump only that table of the state (a join's left or
                                     right rows); CSV needs one when there are several
`

// stateFlags are the flags of every state command.
type stateFlags struct {
	checkpoint int64
	pipeline   string
	format     string
	table      string
}

func cmdState(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, stateUsage)
		return 2
	}
	sub := args[0]
	if sub == "help" || sub == "--help" || sub == "-help" || sub == "-h" {
		fmt.Fprint(stdout, stateUsage)
		return 0
	}
	if sub != "ls" && sub != "show" && sub != "dump" && sub != "reset" {
		fmt.Fprintf(stderr, "etld state: unknown command %q: want ls, show, dump or reset\nRun 'etld state --help' for usage.\n", sub)
		return 2
	}
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	var f stateFlags
	fs.Int64Var(&f.checkpoint, "checkpoint", 0, "")
	fs.StringVar(&f.pipeline, "pipeline", "", "")
	fs.StringVar(&f.format, "format", "", "")
	fs.StringVar(&f.table, "table", "", "")
	if code := parseFlags(fs, args[1:], stateUsage, stdout, stderr); code >= 0 {
		return code
	}
	pos := fs.Args()
	want := map[string][2]int{"ls": {1, 3}, "show": {2, 3}, "dump": {3, 3}, "reset": {2, 3}}[sub]
	if len(pos) < want[0] || len(pos) > want[1] {
		fmt.Fprintf(stderr, "etld state %s: %d arguments, want %s\nRun 'etld state --help' for usage.\n", sub, len(pos), map[string]string{
			"ls": "STATE_DIR [PIPELINE [OPERATOR]]", "show": "STATE_DIR PIPELINE [OPERATOR]", "dump": "STATE_DIR PIPELINE OPERATOR", "reset": "STATE_DIR PIPELINE [OPERATOR]"}[sub])
		return 2
	}
	formats := map[string][]string{"ls": {"text", "json"}, "show": {"text", "json"}, "dump": {"json", "csv"}, "reset": {"text", "text"}}[sub]
	if f.format == "" {
		f.format = formats[0]
	}
	if f.format != formats[0] && f.format != formats[1] {
		fmt.Fprintf(stderr, "etld state %s: unknown --format %q: want %s\n", sub, f.format, strings.Join(formats, " or "))
		return 2
	}
	if sub == "dump" && f.pipeline == "" {
		fmt.Fprintln(stderr, "etld state dump: name the pipeline file with --pipeline FILE: it decodes the state and names its columns")
		return 2
	}
	if sub == "reset" && f.pipeline == "" {
		fmt.Fprintln(stderr, "etld state reset: name the pipeline file with --pipeline FILE: its sources say what lives outside the state directory (a Kafka group's committed offsets, a replication slot's position) that the reset must reset too")
		return 2
	}
	secrets := redact.NewSet()
	if f.pipeline != "" {
		secrets = secretsOf([]string{f.pipeline})
	}
	// The plans and column names ls, show and dump print come from the
	// SQL, whose literals may hold the values of ${VAR}s: hidden. The
	// rows of a dump are data, as a sink writes them.
	// A panic (an operator's bug listing its state) is an error with
	// its stack, as in the other commands.
	var out bytes.Buffer
	err := panics.Call(func() error {
		switch sub {
		case "ls":
			return stateLs(pos, f, &out)
		case "show":
			return stateShow(pos, f, &out)
		case "reset":
			return stateReset(pos, f, &out)
		}
		return stateDump(pos, f, secrets.Redact, stdout)
	})
	io.WriteString(stdout, secrets.Redact(out.String()))
	if err != nil {
		fmt.Fprintf(stderr, "etld state %s: %s\n", sub, secrets.Redact(err.Error()))
		reportPanic(stderr, err, secrets)
		var usage *usageError
		if errors.As(err, &usage) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is a state command's error that a corrected command line
// fixes (an operator that does not exist): exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// stateLs lists pipelines, a pipeline's checkpoints and operators, or an
// operator across the checkpoints.
func stateLs(pos []string, f stateFlags, w io.Writer) error {
	if len(pos) == 1 {
		return lsPipelines(pos[0], f, w)
	}
	store, err := checkpoint.OpenExisting(pos[0], pos[1])
	if err != nil {
		return err
	}
	ids, err := store.IDs()
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("pipeline %s has no checkpoint in %s", pos[1], store.Dir())
	}
	if len(pos) == 3 {
		return lsOperator(store, ids, pos[2], f, w)
	}
	cp, err := readCheckpoint(store, f.checkpoint)
	if err != nil {
		return err
	}
	var cps []checkpointInfo
	for _, id := range ids {
		c, err := store.Read(id)
		if err != nil {
			return err
		}
		cps = append(cps, describeCheckpoint(store, c))
	}
	p, err := statePipeline(f.pipeline, pos[1])
	if err != nil {
		return err
	}
	if p != nil {
		defer p.Plan.Close()
	}
	ops, err := describeOperators(store, cp, p, false)
	if err != nil {
		return err
	}
	if f.format == "json" {
		return writeJSON(w, struct {
			Checkpoints []checkpointInfo `json:"checkpoints"`
			Checkpoint  int64            `json:"operators_of"`
			Operators   []operatorInfo   `json:"operators"`
		}{cps, cp.ID, ops})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECKPOINT\tTAKEN\tSIZE\tFINISHED\t")
	for _, c := range cps {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", c.ID, c.Taken.Format(time.RFC3339), human.Bytes(c.Size), yesNo(c.Finished))
	}
	fmt.Fprintf(tw, "\nOPERATOR\tKIND\tTRANSFORM\tKEYS\tSIZE\t(checkpoint %d)\n", cp.ID)
	for _, o := range ops {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", o.Name, o.Kind, o.Transform, keys(o.Keys), human.Bytes(o.Size))
	}
	return tw.Flush()
}

// lsPipelines lists the pipelines with state under dir.
func lsPipelines(dir string, f stateFlags, w io.Writer) error {
	names, err := checkpoint.Pipelines(dir)
	if err != nil {
		return err
	}
	type pipelineInfo struct {
		Name string `json:"pipeline"`
		checkpointInfo
		Checkpoints int `json:"checkpoints"`
	}
	var out []pipelineInfo
	for _, name := range names {
		store, err := checkpoint.OpenExisting(dir, name)
		if err != nil {
			return err
		}
		cp, err := store.Latest()
		if err != nil {
			return err
		}
		ids, err := store.IDs()
		if err != nil {
			return err
		}
		out = append(out, pipelineInfo{Name: name, checkpointInfo: describeCheckpoint(store, cp), Checkpoints: len(ids)})
	}
	if f.format == "json" {
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PIPELINE\tCHECKPOINT\tTAKEN\tSIZE\tFINISHED\tKEPT\t")
	for _, p := range out {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t\n", p.Name, p.ID, p.Taken.Format(time.RFC3339), human.Bytes(p.Size), yesNo(p.Finished), p.Checkpoints)
	}
	return tw.Flush()
}

// lsOperator lists one operator in each kept checkpoint.
func lsOperator(store *checkpoint.Store, ids []int64, name string, f stateFlags, w io.Writer) error {
	type row struct {
		Checkpoint int64     `json:"checkpoint"`
		Taken      time.Time `json:"taken"`
		operatorInfo
	}
	var out []row
	var id string
	for _, cid := range ids {
		cp, err := store.Read(cid)
		if err != nil {
			return err
		}
		comp, err := findOperator(cp, name)
		if err != nil {
			continue // not in this checkpoint: an older version of the file
		}
		id = comp.ID
		out = append(out, row{cp.ID, cp.Time.UTC(), describeOperator(store, comp)})
	}
	if id == "" {
		cp, err := readCheckpoint(store, 0)
		if err != nil {
			return err
		}
		_, err = findOperator(cp, name)
		return err
	}
	if f.format == "json" {
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CHECKPOINT\tTAKEN\tKEYS\tSIZE\t(%s)\n", shortName(id))
	for _, r := range out {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", r.Checkpoint, r.Taken.Format(time.RFC3339), keys(r.Keys), human.Bytes(r.Size))
	}
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", out)
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// keys shows a count of entries, "-" when not known.
func keys(n int64) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
