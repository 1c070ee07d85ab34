// Package nexmark is the `type: nexmark` source: the Nexmark benchmark's
// event stream (persons, auctions and bids) as the reference generator
// (nexmark-flink's NexmarkGenerator) makes it, bounded or endless.
//
// Options (the Flink connector's name in brackets):
//
//   - events [events.num]: how many events; absent or 0 means unbounded.
//   - rate: events per second; absent or 0 means as fast as the pipeline
//     takes them (the Flink connector's default, max-emit-speed).
//   - first_event_rate [first-event.rate], next_event_rate
//     [next-event.rate]: the event-time rate: event n happens n/rate
//     seconds after base_time (10000 events/s by default). The reference
//     generator spaces events by the first rate only, so a next rate that
//     differs is refused rather than ignored.
//   - base_time: the first event's time (UTC); absent, the wall clock when
//     the source is built, as in the reference.
//   - seed: the seed of the generator's SplittableRandom; absent, a random
//     one, logged. The reference's generator is unseeded; given the same
//     seed, its events and these are the same draw for draw.
//   - person_proportion, auction_proportion, bid_proportion
//     [person.proportion, ...]: events per cycle of each kind (1, 3, 46).
//   - person_avg_size, auction_avg_size, bid_avg_size [person.avg-size,
//     ...]: the average size in bytes the extra field pads an event to
//     (200, 500, 100).
//   - auction_hot_ratio_sellers, bid_hot_ratio_auctions,
//     bid_hot_ratio_bidders [auction.hot-ratio.sellers, ...]: one in that
//     many auctions has a random seller, bids a random auction or bidder;
//     the others go to the hot ones (4, 2, 4).
//
// The rows have the nexmark DDL's physical columns, event_type INT and
// the person, auction and bid ROWs, one of them set per event; the
// pipeline declares them (and the dateTime computed column and its
// watermark) as the DDL does, and the source refuses other columns.
//
// The position is the count of events emitted, the generator's state and
// the base time: a restored run continues the same stream.
package nexmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/etld/etld/internal/pace"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the nexmark source's options.
type Config struct {
	Events                 int64   `yaml:"events"`
	Rate                   float64 `yaml:"rate"`
	FirstEventRate         *int64  `yaml:"first_event_rate"`
	NextEventRate          *int64  `yaml:"next_event_rate"`
	BaseTime               *string `yaml:"base_time"`
	Seed                   *int64  `yaml:"seed"`
	PersonProportion       *int64  `yaml:"person_proportion"`
	AuctionProportion      *int64  `yaml:"auction_proportion"`
	BidProportion          *int64  `yaml:"bid_proportion"`
	PersonAvgSize          *int64  `yaml:"person_avg_size"`
	AuctionAvgSize         *int64  `yaml:"auction_avg_size"`
	BidAvgSize             *int64  `yaml:"bid_avg_size"`
	AuctionHotRatioSellers *int64  `yaml:"auction_hot_ratio_sellers"`
	BidHotRatioAuctions    *int64  `yaml:"bid_hot_ratio_auctions"`
	BidHotRatioBidders     *int64  `yaml:"bid_hot_ratio_bidders"`
}

// Columns is the nexmark DDL's physical columns, in order.
var Columns = []string{
	"event_type INT",
	"person ROW<id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING, " +
		"`dateTime` TIMESTAMP(3), extra STRING>",
	"auction ROW<id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, " +
		"`dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING>",
	"bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), extra STRING>",
}

// New builds a nexmark source over env.Schema. It does no I/O.
func New(cfg Config, env connector.SourceEnv) (*Source, error) {
	gc, errs := genConfigOf(cfg)
	if err := checkSchema(env); err != nil {
		errs = append(errs, err)
	}
	if cfg.Events < 0 {
		errs = append(errs, connector.Errorf("events", "must be >= 0 (0: unbounded), got %d", cfg.Events))
	}
	if !(cfg.Rate >= 0) || math.IsInf(cfg.Rate, 0) { // NaN too
		errs = append(errs, connector.Errorf("rate", "must be >= 0 events per second (0: as fast as possible), got %v", cfg.Rate))
	}
	base := time.Now()
	if cfg.BaseTime != nil {
		t, err := parseTime(*cfg.BaseTime)
		if err != nil {
			errs = append(errs, connector.Errorf("base_time", "%v", err))
		}
		base = t
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	gc.baseTime = base.UnixMilli()
	s := &Source{
		name:    env.Name,
		prefix:  "nexmark " + env.Name + " event ",
		log:     env.Logger,
		gen:     gc,
		events:  cfg.Events,
		seedSet: cfg.Seed != nil,
		baseSet: cfg.BaseTime != nil,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.seed = rand.Int64()
	if cfg.Seed != nil {
		s.seed = *cfg.Seed
	}
	s.rng = newSplitMix(s.seed)
	if cfg.Rate > 0 {
		s.pace = pace.New(cfg.Rate)
	}
	return s, nil
}

// Register adds the nexmark source to r.
func Register(r *connector.Registry) {
	connector.RegisterSource(r, "nexmark", "the Nexmark benchmark's persons, auctions and bids, as its reference generator makes them",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) { return New(cfg, env) })
}

// Source generates Nexmark events. It is used from one goroutine at a time.
type Source struct {
	name string
	// prefix starts an event's position in errors ("nexmark bids event
	// 17"), the event id counted from 0 as the generator's.
	prefix  string
	log     *slog.Logger
	gen     genConfig
	rng     splitMix
	seed    int64
	seedSet bool
	baseSet bool
	// events is the limit, 0 for none; emitted counts events returned.
	events   int64
	emitted  int64
	restored bool
	pace     *pace.Pacer
	// ev is the event being built; enc, ends and types a batch's
	// encoded ROWs, where each ends and its event's type. All reused.
	ev    event
	enc   []byte
	ends  []int
	types []int32
	// needed and paths are the plan's pushdown (pushdown.go): the
	// physical columns it reads (nil: all) and the fields it reads as
	// columns of their own, gap columns after the physical ones.
	needed []bool
	paths  []connector.FieldPath
	gap    int
}

// Bounded reports whether `events` ends the source.
func (s *Source) Bounded() bool { return s.events > 0 }

// Open logs where the events come from, so that a run can be reproduced.
func (s *Source) Open(ctx context.Context) error {
	switch {
	case s.restored:
		s.log.Info("nexmark resumes from its checkpoint", "events_emitted", s.emitted)
	case s.seedSet:
		s.log.Debug("nexmark seed", "seed", s.seed, "base_time", s.gen.baseTime)
	default:
		s.log.Info("nexmark chose a random seed; set `seed` (and `base_time`) to these to get the same events again",
			"seed", s.seed, "base_time", time.UnixMilli(s.gen.baseTime).UTC().Format(timeLayout))
	}
	return nil
}

// Read returns up to max events, fewer when the limit is near or the rate
// allows fewer; with a rate it waits for the budget, until ctx ends. The
// last batch of a bounded source comes with io.EOF.
func (s *Source) Read(ctx context.Context, max int) (*row.Batch, error) {
	if max < 1 {
		return nil, fmt.Errorf("nexmark %s: read of %d events: want at least 1", s.name, max)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nexmark %s: %w", s.name, err)
	}
	n := int64(max)
	if s.events > 0 {
		if s.emitted >= s.events {
			return nil, io.EOF
		}
		n = min(n, s.events-s.emitted)
	}
	if s.pace != nil {
		got, err := s.pace.Take(ctx, int(n))
		if err != nil {
			return nil, fmt.Errorf("nexmark %s: waiting for the rate: %w", s.name, err)
		}
		n = int64(got)
	}
	at := len(Columns) + s.gap // path j's column is at+j
	width := at + len(s.paths)
	b := row.NewBatch(int(n), width)
	b.Origin = row.Sequence{Prefix: s.prefix, First: s.emitted}
	// The batch's ROW values share one string, made once: a value per
	// event would cost an allocation and copies each. The fields read as
	// columns (pushdown.go) come from the event as it is made.
	s.enc, s.ends, s.types = s.enc[:0], s.ends[:0], s.types[:0]
	for id := s.emitted; id < s.emitted+n; id++ {
		s.gen.next(id, &s.rng, &s.ev)
		typ := s.ev.typ
		if s.wantsColumn(1 + int(typ)) {
			s.enc = appendEvent(s.enc, &s.ev)
		}
		s.ends, s.types = append(s.ends, len(s.enc)), append(s.types, typ)
		r := b.NewRow()
		r[0] = row.IntValue(typ)
		for j, p := range s.paths {
			if p.Column == 1+int(typ) {
				r[at+j] = field(&s.ev, p.Fields[0])
			}
		}
		b.Append(row.Insert, r)
	}
	enc, start := string(s.enc), 0
	for i, end := range s.ends {
		if end > start {
			part, err := row.NestedValue(row.Struct, enc[start:end])
			if err != nil {
				return nil, fmt.Errorf("nexmark %s: %w", s.name, err)
			}
			b.Changes[i].Row[1+s.types[i]] = part
		}
		start = end
	}
	s.emitted += n
	if s.events > 0 && s.emitted == s.events {
		return b, io.EOF
	}
	return b, nil
}

// Close releases nothing: the source holds no resources.
func (s *Source) Close(ctx context.Context) error { return nil }

// Position returns the events emitted, the generator's state and the base
// time after the last batch Read returned.
func (s *Source) Position() ([]byte, error) { return s.marshalPosition(), nil }

// Restore makes the source continue after the position pos; it is called
// before Open.
func (s *Source) Restore(pos []byte) error {
	if err := s.unmarshalPosition(pos); err != nil {
		return fmt.Errorf("nexmark %s: restore: %w", s.name, err)
	}
	s.restored = true
	return nil
}

// Replays implements connector.Replayer: a restored run continues the
// stream from its checkpointed state; a run that starts over makes the
// same events only with the same seed and base time.
func (s *Source) Replays() string {
	var missing []string
	if !s.seedSet {
		missing = append(missing, "seed")
	}
	if !s.baseSet {
		missing = append(missing, "base_time")
	}
	if len(missing) == 0 {
		return ""
	}
	return "without " + strings.Join(missing, " and ") + " a run that starts over makes other events; set them"
}

var (
	_ connector.Source     = (*Source)(nil)
	_ connector.Positioner = (*Source)(nil)
	_ connector.Replayer   = (*Source)(nil)
)
