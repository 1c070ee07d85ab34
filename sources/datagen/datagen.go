// Package datagen is the `type: datagen` source: generated rows, bounded or
// endless, as Flink's datagen connector makes them.
//
// Options (Flink's name in brackets):
//
//   - rows [number-of-rows]: how many rows; absent means unbounded.
//   - rate [rows-per-second]: rows per second; absent or 0 means as fast as
//     the pipeline takes them (Flink defaults to 10000; etld does not pace
//     unless asked, so that benchmarks and tests need not say so).
//   - seed: the same seed gives the same rows, on every machine. Absent, a
//     random seed is chosen and logged at Info so that a run can be
//     reproduced. Random timestamps are the exception: they are relative to
//     the clock (below).
//   - fields: per column, {kind: random|sequence, ...}; random by default.
//
// Per-column options and what they mean for each type:
//
//   - kind: random (the default) or sequence.
//   - null_rate [null-rate]: the share of NULLs, in [0, 1].
//   - min, max (random; INT, BIGINT, DECIMAL, FLOAT, DOUBLE): bounds,
//     inclusive for INT, BIGINT and DECIMAL, [min, max) for FLOAT and
//     DOUBLE. Integers and decimals default to the type's range. Floats
//     default to [0, 1): Flink's default, (Double.MIN_VALUE,
//     Double.MAX_VALUE), gives almost only numbers near 1e308.
//   - length (random; STRING, BYTES): the length of random alphanumeric
//     strings or random bytes; default 100, or n for VARCHAR(n) when n is
//     smaller.
//   - max_past [max-past] (random; TIMESTAMP, TIMESTAMP_LTZ, DATE): random
//     instants lie between the current time minus max_past and the current
//     time when the row is made (default 0: the current time), so they
//     track the clock and are not reproducible by seed.
//   - start, end (sequence): start, start+1, ..., end inclusive, for INT,
//     BIGINT, DECIMAL, FLOAT, DOUBLE and STRING (the number as text). For
//     TIMESTAMP, TIMESTAMP_LTZ and DATE (an etld extension, so that
//     event-time tests are reproducible) start and end are timestamp or
//     date texts and step is the distance between values (default 1s, 1d
//     for DATE); end is optional there.
//
// A sequence ends the source when it is exhausted, as in Flink: a source
// with a finite sequence, or with rows, is bounded, and the first limit
// reached ends it. A NULL drawn for a sequence column still uses up its
// value, so sequences stay aligned with row numbers.
//
// Values are drawn row by row, column by column, from one PCG generator, so
// a run's rows do not depend on how Read calls split them, and the
// generator's state is the source's position (with the row count and the
// sequence counters).
package datagen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/etld/etld/internal/pace"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the datagen source's options.
type Config struct {
	Rows   *int64                 `yaml:"rows"`
	Rate   float64                `yaml:"rate"`
	Seed   *int64                 `yaml:"seed"`
	Fields map[string]FieldConfig `yaml:"fields"`
}

// FieldConfig is one column's generator. Bounds and sequence ends are kept
// as text because their type is the column's.
type FieldConfig struct {
	Kind     string         `yaml:"kind"`
	NullRate *float64       `yaml:"null_rate"`
	Min      *string        `yaml:"min"`
	Max      *string        `yaml:"max"`
	Length   *int           `yaml:"length"`
	MaxPast  *time.Duration `yaml:"max_past"`
	Start    *string        `yaml:"start"`
	End      *string        `yaml:"end"`
	Step     *time.Duration `yaml:"step"`
}

// New builds a datagen source over env.Schema. It does no I/O.
func New(cfg Config, env connector.SourceEnv) (*Source, error) {
	var errs []error
	if env.Schema.Len() == 0 {
		errs = append(errs, connector.Errorf("schema", "datagen needs at least one column to generate"))
	}
	if cfg.Rows != nil && *cfg.Rows < 0 {
		errs = append(errs, connector.Errorf("rows", "must be >= 0, got %d", *cfg.Rows))
	}
	if !(cfg.Rate >= 0) || math.IsInf(cfg.Rate, 0) { // NaN too
		errs = append(errs, connector.Errorf("rate", "must be >= 0 rows per second (0: as fast as possible), got %v", cfg.Rate))
	}
	cols, err := buildColumns(env.Schema, cfg.Fields)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &Source{
		name:      env.Name,
		given:     cfg,
		schema:    env.Schema,
		rowPrefix: "datagen " + env.Name + " row ",
		log:       env.Logger,
		cols:      cols,
		rows:      -1,
		seedSet:   cfg.Seed != nil,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Rows != nil {
		s.rows = *cfg.Rows
	}
	if cfg.Seed != nil {
		s.seed = *cfg.Seed
	} else {
		s.seed = rand.Int64()
	}
	s.pcg = *rand.NewPCG(uint64(s.seed), pcgStream)
	if cfg.Rate > 0 {
		s.pace = pace.New(cfg.Rate)
	}
	for i := range s.cols {
		c := &s.cols[i]
		s.anyTime = s.anyTime || c.gen == genPast
		if c.gen == genSeqInt || c.gen == genSeqFloat {
			s.seqs = append(s.seqs, i)
		}
	}
	return s, nil
}

// pcgStream is the PCG's second seed word: fixed, so that one int64 seed
// names the whole stream.
const pcgStream = 0x9e3779b97f4a7c15

// Register adds the datagen source to r.
func Register(r *connector.Registry) {
	connector.RegisterSource(r, "datagen", "generated rows: random or sequence per column, bounded or endless, optionally paced",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) { return New(cfg, env) })
}

// Source generates rows. It is used from one goroutine at a time.
type Source struct {
	name string
	// given and schema are the options as written and the columns, for
	// FlinkSource.
	given  Config
	schema row.Schema
	// rowPrefix starts the position of a generated row in errors
	// ("datagen gen row 17"), counted from 1 over the whole run.
	rowPrefix string
	log       *slog.Logger
	cols      []column
	// seqs indexes the sequence columns in cols.
	seqs    []int
	anyTime bool
	// rows is the row limit, -1 for none; emitted counts rows returned.
	rows    int64
	emitted int64
	seed    int64
	seedSet bool
	// restored is set by Restore: the seed no longer says where rows come from.
	restored bool
	pcg      rand.PCG
	pace     *pace.Pacer
	scratch  []byte
}

// Bounded reports whether a row limit or a finite sequence ends the source.
func (s *Source) Bounded() bool {
	_, bounded := s.remaining()
	return bounded
}

// remaining returns how many rows are left and whether there is a limit.
func (s *Source) remaining() (uint64, bool) {
	left, bounded := uint64(math.MaxUint64), false
	if s.rows >= 0 {
		left, bounded = uint64(max(s.rows-s.emitted, 0)), true
	}
	for _, i := range s.seqs {
		q := &s.cols[i].seq
		if q.count == 0 {
			continue
		}
		bounded = true
		if q.next >= q.count {
			left = 0
		} else {
			left = min(left, q.count-q.next)
		}
	}
	return left, bounded
}

// Open logs where the rows come from, so that a run can be reproduced.
func (s *Source) Open(ctx context.Context) error {
	switch {
	case s.restored:
		s.log.Info("datagen resumes from its checkpoint", "rows_emitted", s.emitted)
	case s.seedSet:
		s.log.Debug("datagen seed", "seed", s.seed)
	default:
		s.log.Info("datagen chose a random seed; set `seed` to this value to get the same rows again",
			"seed", s.seed)
	}
	return nil
}

// Read returns up to max generated rows, fewer when a limit is near or the
// rate allows fewer; with a rate it waits for the budget, until ctx ends.
// The last batch of a bounded source comes with io.EOF.
func (s *Source) Read(ctx context.Context, max int) (*row.Batch, error) {
	if max < 1 {
		return nil, fmt.Errorf("datagen %s: read of %d rows: want at least 1", s.name, max)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("datagen %s: %w", s.name, err)
	}
	left, bounded := s.remaining()
	if bounded && left == 0 {
		return nil, io.EOF
	}
	n := max
	if bounded && left < uint64(n) {
		n = int(left)
	}
	if s.pace != nil {
		var err error
		if n, err = s.pace.Take(ctx, n); err != nil {
			return nil, fmt.Errorf("datagen %s: waiting for the rate: %w", s.name, err)
		}
	}
	var now clock
	if s.anyTime {
		now = newClock(time.Now())
	}
	b := row.NewBatch(n, len(s.cols))
	b.Origin = row.Sequence{Prefix: s.rowPrefix, First: s.emitted + 1}
	for range n {
		r := b.NewRow()
		s.fill(r, &now)
		b.Append(row.Insert, r)
	}
	s.emitted += int64(n)
	if bounded && left == uint64(n) {
		return b, io.EOF
	}
	return b, nil
}

// Close releases nothing: the source holds no resources.
func (s *Source) Close(ctx context.Context) error { return nil }

// Position returns the rows emitted, the sequence counters and the
// generator's state after the last batch Read returned.
func (s *Source) Position() ([]byte, error) {
	return s.marshalPosition()
}

// Restore makes the source continue after the position pos; it is called
// before Open.
func (s *Source) Restore(pos []byte) error {
	if err := s.unmarshalPosition(pos); err != nil {
		return fmt.Errorf("datagen %s: restore: %w", s.name, err)
	}
	s.restored = true
	return nil
}

// Replays implements connector.Replayer: a restored run continues the
// generator from its checkpointed state, and a run that starts over draws
// the same rows only from the same seed. Random timestamps follow the
// clock.
func (s *Source) Replays() string {
	switch {
	case s.anyTime:
		return "random timestamps (max_past) follow the clock"
	case !s.seedSet:
		return "without a seed a run that starts over draws other rows; set seed"
	}
	return ""
}

var (
	_ connector.Source     = (*Source)(nil)
	_ connector.Positioner = (*Source)(nil)
	_ connector.Replayer   = (*Source)(nil)
)
