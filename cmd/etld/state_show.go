package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/human"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// checkpointInfo is what ls shows of a checkpoint.
type checkpointInfo struct {
	ID       int64     `json:"checkpoint"`
	Taken    time.Time `json:"taken"`
	Finished bool      `json:"finished"`
	// Size is the checkpoint file's and its parts' bytes.
	Size int64 `json:"size"`
}

func describeCheckpoint(store *checkpoint.Store, cp *checkpoint.Checkpoint) checkpointInfo {
	size, _ := store.FileSize(cp.ID)
	for i := range cp.Components {
		if c := &cp.Components[i]; c.RuntimePart != "" {
			n, _ := store.Size(c)
			size += n - int64(len(c.Connector))
		}
	}
	return checkpointInfo{ID: cp.ID, Taken: cp.Time.UTC(), Finished: cp.Finished, Size: size}
}

// operatorInfo is what ls and show tell of a node's part of a
// checkpoint (an operator's, or a source's or sink's for show).
type operatorInfo struct {
	// Name is the short name commands take: TRANSFORM/KIND#N for an
	// operator, source/NAME, sink/NAME.
	Name      string `json:"name"`
	ID        string `json:"state_id"`
	Kind      string `json:"kind"`
	Transform string `json:"transform,omitempty"`
	// Keys is the entries the state held, -1 when the checkpoint does
	// not say (one written before etld counted them).
	Keys int64 `json:"keys"`
	Size int64 `json:"size"`
	// Part is the file of the state, when it is not in the checkpoint
	// file.
	Part  string `json:"part,omitempty"`
	Ended bool   `json:"ended"`
	// With --pipeline: the operator's plan, its columns, and whether
	// the file's operator is the one the checkpoint was taken of.
	Plan   string     `json:"plan,omitempty"`
	Input  [][]string `json:"input,omitempty"`
	Output []string   `json:"output,omitempty"`
	Fits   *bool      `json:"fits_file,omitempty"`
}

func describeOperator(store *checkpoint.Store, c *checkpoint.Component) operatorInfo {
	size, _ := store.Size(c)
	o := operatorInfo{Name: shortName(c.ID), ID: c.ID, Kind: kindOf(c), Keys: c.Entries, Size: size, Part: c.RuntimePart, Ended: c.Ended}
	if parts := strings.SplitN(c.ID, "/", 3); parts[0] == "transform" && len(parts) == 3 {
		o.Transform = parts[1]
	}
	return o
}

// describeOperators describes cp's operators (all its parts with all),
// with what the pipeline p, if not nil, tells of each.
func describeOperators(store *checkpoint.Store, cp *checkpoint.Checkpoint, p *pipeline.Pipeline, all bool) ([]operatorInfo, error) {
	var out []operatorInfo
	for i := range cp.Components {
		c := &cp.Components[i]
		if !all && !strings.HasPrefix(c.ID, "transform/") {
			continue
		}
		out = append(out, describeOperator(store, c))
	}
	if p == nil {
		return out, nil
	}
	labels := map[string]string{}
	for _, n := range p.Describe().Nodes {
		if n.StateID != "" {
			labels[n.StateID] = n.Label
		}
	}
	vs, err := p.StateVerdicts(cp, nil)
	if err != nil {
		return nil, err
	}
	// The pipeline's state ID of each saved state it takes: a renamed
	// transform's, or a checkpoint of format 3's, differs from the saved.
	taken := map[string]pipeline.StateVerdict{}
	for _, v := range vs {
		if v.From != "" {
			taken[v.From] = v
		}
	}
	for i := range out {
		o := &out[i]
		v, ok := taken[o.ID]
		if !ok {
			fits := false
			o.Fits = &fits
			continue
		}
		in, outCols, ok := p.Plan.StateColumns(v.ID)
		if !ok {
			continue
		}
		o.Plan = labels[v.ID]
		for _, s := range in {
			o.Input = append(o.Input, columns(s))
		}
		o.Output = columns(outCols)
		fits := v.Restores()
		o.Fits = &fits
	}
	return out, nil
}

func columns(s row.Schema) []string {
	out := make([]string, s.Len())
	for i, f := range s.Fields {
		out[i] = f.Name + " " + f.Type.String()
	}
	return out
}

// statePipeline loads the pipeline file of the state of pipeline name,
// nil when no file is named; the caller closes its plan.
func statePipeline(file, name string) (*pipeline.Pipeline, error) {
	if file == "" {
		return nil, nil
	}
	ps, err := load([]string{file}, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		return nil, &usageError{fmt.Sprintf("--pipeline %s: %d pipelines, want the one file of the state", file, len(ps))}
	}
	if ps[0].Name() != name {
		ps[0].Plan.Close()
		return nil, &usageError{fmt.Sprintf("--pipeline %s is pipeline %q, the state is of %q", file, ps[0].Name(), name)}
	}
	return ps[0], nil
}

// stateShow prints every part of a checkpoint, or one operator in full.
func stateShow(pos []string, f stateFlags, w io.Writer) error {
	store, err := checkpoint.OpenExisting(pos[0], pos[1])
	if err != nil {
		return err
	}
	cp, err := readCheckpoint(store, f.checkpoint)
	if err != nil {
		return err
	}
	p, err := statePipeline(f.pipeline, pos[1])
	if err != nil {
		return err
	}
	if p != nil {
		defer p.Plan.Close()
	}
	all, err := describeOperators(store, cp, p, true)
	if err != nil {
		return err
	}
	if len(pos) == 3 {
		comp, err := findOperator(cp, pos[2])
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.ID == comp.ID {
				return showOperator(w, cp, o, f.format)
			}
		}
	}
	info := describeCheckpoint(store, cp)
	if f.format == "json" {
		return writeJSON(w, struct {
			checkpointInfo
			Pipeline string         `json:"pipeline"`
			Parts    []operatorInfo `json:"parts"`
		}{info, cp.Pipeline, all})
	}
	fmt.Fprintf(w, "pipeline %s, checkpoint %d, taken %s, %s, finished: %s\n\n", cp.Pipeline, cp.ID, info.Taken.Format(time.RFC3339), human.Bytes(info.Size), yesNo(cp.Finished))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tTRANSFORM\tKEYS\tSIZE\tENDED\t")
	for _, o := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Name, o.Kind, o.Transform, keys(o.Keys), human.Bytes(o.Size), yesNo(o.Ended))
	}
	return tw.Flush()
}

func showOperator(w io.Writer, cp *checkpoint.Checkpoint, o operatorInfo, format string) error {
	if format == "json" {
		return writeJSON(w, o)
	}
	fmt.Fprintf(w, "operator:   %s (state id %s) of pipeline %s, checkpoint %d\n", o.Name, o.ID, cp.Pipeline, cp.ID)
	fmt.Fprintf(w, "kind:       %s\n", o.Kind)
	if o.Transform != "" {
		fmt.Fprintf(w, "transform:  %s\n", o.Transform)
	}
	fmt.Fprintf(w, "keys:       %s\n", keys(o.Keys))
	where := "in the checkpoint file"
	if o.Part != "" {
		where = "in " + o.Part
	}
	fmt.Fprintf(w, "size:       %s (%d bytes), %s\n", human.Bytes(o.Size), o.Size, where)
	fmt.Fprintf(w, "ended:      %s\n", yesNo(o.Ended))
	if o.Fits == nil {
		fmt.Fprintln(w, "plan:       (name the pipeline file with --pipeline to see the plan and columns)")
		return nil
	}
	fmt.Fprintf(w, "plan:       %s\n", o.Plan)
	for i, in := range o.Input {
		fmt.Fprintf(w, "input %d:    %s\n", i, strings.Join(in, ", "))
	}
	fmt.Fprintf(w, "output:     %s\n", strings.Join(o.Output, ", "))
	fits := "yes"
	if !*o.Fits {
		fits = "no: the file's operator changed since this checkpoint (a run refuses it)"
	}
	fmt.Fprintf(w, "fits file:  %s\n", fits)
	return nil
}

// readCheckpoint reads checkpoint id, or the newest for 0.
func readCheckpoint(store *checkpoint.Store, id int64) (*checkpoint.Checkpoint, error) {
	if id != 0 {
		return store.Read(id)
	}
	cp, err := store.Latest()
	if err == nil && cp == nil {
		err = fmt.Errorf("no checkpoint in %s", store.Dir())
	}
	return cp, err
}

// findOperator finds an operator's part of cp by its state ID, its short
// name (TRANSFORM/KIND#N) or, when its transform has one stateful operator,
// the transform's name.
func findOperator(cp *checkpoint.Checkpoint, name string) (*checkpoint.Component, error) {
	for _, id := range []string{name, "transform/" + name} {
		if c := cp.Find(id); c != nil {
			return c, nil
		}
	}
	var found []*checkpoint.Component
	var names []string
	for i := range cp.Components {
		c := &cp.Components[i]
		if strings.HasPrefix(c.ID, "transform/"+name+"/") && !strings.HasSuffix(c.ID, "/inputs") {
			found = append(found, c)
			names = append(names, shortName(c.ID))
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var all []string
		for _, c := range cp.Components {
			if strings.HasPrefix(c.ID, "transform/") {
				all = append(all, shortName(c.ID))
			}
		}
		return nil, &usageError{fmt.Sprintf("checkpoint %d of pipeline %s holds no operator %q; it holds %s", cp.ID, cp.Pipeline, name, strings.Join(all, ", "))}
	}
	return nil, &usageError{fmt.Sprintf("transform %q has %d stateful operators in checkpoint %d: name one of %s", name, len(found), cp.ID, strings.Join(names, ", "))}
}

// shortName is a state ID without "transform/": TRANSFORM/KIND#N.
func shortName(id string) string { return strings.TrimPrefix(id, "transform/") }

// kindOf names what a part of a checkpoint is the state of: an
// operator's kind as its plan names it (GroupAggregate, Join, ...), the
// rows a join's union holds back, a source, a sink or dead letters.
func kindOf(c *checkpoint.Component) string {
	first, _, _ := strings.Cut(c.ID, "/")
	switch {
	case first != "transform":
		return first
	case strings.HasSuffix(c.ID, "/inputs"):
		return "JoinInputs"
	}
	kind, _, _ := strings.Cut(c.Fingerprint, "(")
	kind, _, _ = strings.Cut(kind, ",")
	return kind
}
