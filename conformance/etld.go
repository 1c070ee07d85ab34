package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// Outcome is what etld did with a case.
type Outcome struct {
	// Lines are the printed changes (+I[...]), or the lines of the file
	// sink's output for a `sink:` case.
	Lines []string
	// Schema is the query's output schema (empty when it did not plan).
	Schema row.Schema
	// Refused is the load (validation) error; Failed the run's error.
	Refused error
	Failed  error
}

// Err is the outcome's error, refused or failed, or nil.
func (o Outcome) Err() error {
	if o.Refused != nil {
		return o.Refused
	}
	return o.Failed
}

// etldOut is the file a `sink:` case's etld output goes to.
const etldOut = "etld-sink.out"

// Pipeline is the case as an etld pipeline file reading dir's data files:
// a file source per table, the query as transform q, and a sink in
// retract mode when the query is updating (auto): a blackhole whose
// batches the run taps (print's text, see RunEtld), or a file sink in the
// `sink:` format. mini_batch is off, as Flink's is by default, so every
// change is emitted as Flink emits it.
func (c *Case) Pipeline(dir string) ([]byte, error) {
	type source struct {
		Name      string   `yaml:"name"`
		Type      string   `yaml:"type"`
		Path      string   `yaml:"path"`
		Format    string   `yaml:"format"`
		Key       []string `yaml:"key,omitempty"`
		Watermark string   `yaml:"watermark,omitempty"`
		Schema    []string `yaml:"schema"`
	}
	type transform struct {
		Name string `yaml:"name"`
		SQL  string `yaml:"sql"`
	}
	type sink struct {
		Name   string `yaml:"name"`
		From   string `yaml:"from"`
		Type   string `yaml:"type"`
		Path   string `yaml:"path,omitempty"`
		Format string `yaml:"format,omitempty"`
	}
	type file struct {
		Version    int         `yaml:"version"`
		Name       string      `yaml:"name"`
		Execution  string      `yaml:"execution"`
		MiniBatch  bool        `yaml:"mini_batch"`
		Zone       string      `yaml:"local_time_zone,omitempty"`
		Sources    []source    `yaml:"sources"`
		Transforms []transform `yaml:"transforms"`
		Sinks      []sink      `yaml:"sinks"`
	}
	f := file{Version: 1, Name: "conformance-" + c.Name, Execution: "streaming", Zone: c.Zone}
	if c.Batch {
		f.Execution = "batch"
	}
	for _, t := range c.Tables {
		s := source{Name: t.Name, Type: "file", Path: filepath.Join(dir, t.Name+dataSectionExt), Format: t.Format,
			Key: t.Key, Schema: t.Columns}
		if t.WatermarkColumn != "" {
			s.Watermark = t.Watermark
		}
		f.Sources = append(f.Sources, s)
	}
	f.Transforms = []transform{{Name: "q", SQL: c.Query() + "\n"}}
	sk := sink{Name: "out", From: "q", Type: "blackhole"}
	if c.Sink != nil {
		sk.Type, sk.Path, sk.Format = "file", filepath.Join(dir, etldOut), c.Sink.Format
	}
	f.Sinks = []sink{sk}
	return yaml.Marshal(f)
}

// RunEtld runs the case through etld in this process, with its data files
// in dir (a fresh directory).
func (c *Case) RunEtld(ctx context.Context, dir string) Outcome { return c.RunEtldBatch(ctx, dir, 0) }

// RunEtldBatch is RunEtld with sources reading at most batchSize
// records at a time (0: the default).
func (c *Case) RunEtldBatch(ctx context.Context, dir string, batchSize int) Outcome {
	if err := c.WriteData(dir); err != nil {
		return Outcome{Refused: err}
	}
	data, err := c.Pipeline(dir)
	if err != nil {
		return Outcome{Refused: err}
	}
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return Outcome{Refused: err}
	}
	none := func(string) (string, bool) { return "", false }
	p, err := pipeline.Parse(path, data, none, pipeline.Env{Registry: builtin.Registry()})
	if err != nil {
		return Outcome{Refused: err}
	}
	var out Outcome
	if len(p.Plan.Sinks) == 1 {
		out.Schema = p.Plan.Sinks[0].Input.Root.Schema
	}
	var mu sync.Mutex
	var line []byte
	tap := func(_ string, b *row.Batch) {
		if c.Sink != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, ch := range b.Changes {
			// The print sink's text, row.AppendPrint, line by line.
			line = row.AppendPrint(line[:0], ch.Kind, ch.Row)
			out.Lines = append(out.Lines, string(line))
		}
	}
	if _, err := p.Run(ctx, pipeline.RunOptions{Tap: tap, BatchSize: batchSize}); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("did not finish in time: %w", err)
		}
		out.Failed = err
		return out
	}
	if c.Sink != nil {
		data, err := os.ReadFile(filepath.Join(dir, etldOut))
		if err != nil {
			out.Failed = err
			return out
		}
		out.Lines = splitLines(string(data))
	}
	return out
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
