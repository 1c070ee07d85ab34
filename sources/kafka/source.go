package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Source reads Kafka topics. Open, Read, Position, Commit and Close are
// called from one goroutine; Lag and Bytes from any.
//
// Open starts the work in the background and returns at once: finding the
// partitions (retrying while no broker answers), joining the group and
// starting one reader goroutine per partition, which feed one channel.
// Read takes from that channel, so a broker that is away holds Read back
// (until ctx ends) but is not an error.
type Source struct {
	name   string
	flink  flinkConfig // what FlinkSource needs of the config
	opts   options
	rows   *rowBuilder
	reject func(connector.BadRecord) error
	log    *slog.Logger

	client    *kafka.Client
	transport *kafka.Transport
	dialer    *kafka.Dialer

	ctx    context.Context // background work; ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	msgs    chan fetched
	changed chan struct{} // an assignment began or ended
	fatal   chan error

	// mu guards parts and gen: the background goroutine changes them on
	// a rebalance while Read, Position and Commit read them. Only that
	// goroutine writes parts, so it reads parts without mu.
	mu    sync.Mutex
	parts map[topicPartition]*part
	gen   *generation // the current generation; nil between them
	// assigned is set once partitions are known (static), or while a
	// generation is live (group).
	assigned atomic.Bool

	restore map[topicPartition]int64 // from Restore, applied on assignment
	// from is, per partition, the offset the source's state began at
	// (its first run's start, kept in the position), -1 when a restored
	// position did not say; under mu. reread, set by RereadTo, is where
	// a reread ends (reread.go).
	from, reread, rereadFrom map[topicPartition]int64
	// run is what the runtime told SetRun; keepsState names the operator
	// downstream that keeps state, if any (KeepsState).
	runInfo    connector.RunInfo
	keepsState string
	// ask asks the runtime for a checkpoint (AskCheckpoints); revoke is
	// the commit a rebalance waits for, under mu.
	ask     func()
	revoke  *revokeWait
	pending *fetched // a message left for the next Read
	opened  bool
	err     error // returned by every Read once set

	bytes atomic.Int64
}

type topicPartition struct {
	topic     string
	partition int
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s/%d", tp.topic, tp.partition) }

// part is one partition's reading state.
type part struct {
	tp topicPartition
	// name is tp as "topic/partition", made once: the input its
	// messages' positions name (row.Positions).
	name string
	// next is the offset after the last message Read returned, or -1
	// before this run has placed the partition. Read writes it; the group
	// goroutine reads it on a rebalance.
	next atomic.Int64
	// end is the offset a bounded source stops at (exclusive).
	end int64
	// hw is the partition's high watermark as last seen, for Lag.
	hw atomic.Int64
	// times are the messages' timestamps the lag in seconds needs
	// (lag.go).
	times partTimes
	// committed is the highest offset this run committed for it.
	committed atomic.Int64
	// cur is the reader now feeding the partition; nil when the
	// partition is not (or no longer) ours. Messages of any other reader
	// are stale.
	cur atomic.Pointer[partReader]
}

// newPart is a partition this run has not placed yet, read to no end and
// with no high watermark seen.
func newPart(tp topicPartition) *part {
	p := &part{tp: tp, name: tp.String(), end: -1}
	p.next.Store(-1)
	p.hw.Store(-1)
	newPartTimes(&p.times)
	return p
}

type partReader struct {
	r   *kafka.Reader
	end int64 // stop after end-1; -1 for unbounded
	// start is the offset the reader began at: a position below it was
	// taken before this assignment of the partition.
	start int64
}

// fetched is a message on its way from a reader goroutine to Read.
type fetched struct {
	p   *part
	rd  *partReader
	msg kafka.Message
	// marker: msg is a transaction marker (marker.go), no message.
	marker bool
}

// Open starts reading in the background.
func (s *Source) Open(ctx context.Context) error {
	if s.opened {
		return errors.New("opened twice")
	}
	s.opened = true
	s.msgs = make(chan fetched, queueLen)
	s.changed = make(chan struct{}, 1)
	s.fatal = make(chan error, 1)
	// TLS files are read here rather than in New, which does no I/O.
	var err error
	if s.dialer, err = s.opts.kafka.Dialer(); err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	if s.transport, err = s.opts.kafka.Transport(); err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	s.client = &kafka.Client{Addr: kafka.TCP(s.opts.brokers...), Timeout: 10 * time.Second, Transport: s.transport}
	if s.opts.groupID != "" {
		s.opts.instanceID = s.opts.instanceFor(s.runInfo)
	}
	// The background work lives until Close, not until Open's ctx ends.
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// A panic here fails the source with its stack, not the process.
		if err := panics.Call(func() error { return s.run(s.ctx) }); err != nil && s.ctx.Err() == nil {
			s.fail(err)
		}
	}()
	return nil
}

// run finds the partitions and their offsets, then reads them: all of them
// without a group, the assigned ones with a group.
func (s *Source) run(ctx context.Context) error {
	var partitions []topicPartition
	what := fmt.Sprintf("kafka source: reading the partitions of %v from %v", s.opts.topics, s.opts.brokers)
	err := retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
		var err error
		partitions, err = s.partitions(ctx)
		if kafkaconf.Refused(err) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return err
	}
	var ends map[topicPartition]int64
	if s.reread != nil {
		return s.runReread(ctx, partitions)
	}
	if s.opts.bounded {
		// The end offsets are those seen now: a bounded read is a snapshot
		// of the topics as they are at start.
		what := "kafka source: reading end offsets"
		err := retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
			var err error
			ends, err = s.listOffsets(ctx, partitions, kafka.LastOffset)
			return err
		})
		if err != nil {
			return err
		}
	}
	s.mu.Lock()
	for _, tp := range partitions {
		p := newPart(tp)
		if ends != nil {
			p.end = ends[tp]
			p.hw.Store(p.end)
		}
		s.parts[tp] = p
	}
	for tp, off := range s.restore {
		if s.parts[tp] == nil {
			s.log.Warn("kafka source: the restored checkpoint names a partition the topics no longer have; ignored", "partition", tp.String(), "offset", off)
		}
	}
	s.mu.Unlock()
	if s.opts.groupID == "" {
		return s.runStatic(ctx, partitions, nil)
	}
	if s.opts.bounded {
		// A bounded read must reach the end of every partition. Group
		// membership could hand this process only some of them (members
		// of a killed process linger until their session times out), and
		// the source would finish with the others unread. So, as Flink's
		// KafkaSource always does, a bounded source reads every partition
		// itself and uses the group only for its committed offsets.
		var committed map[topicPartition]int64
		what := "kafka source: reading the group's committed offsets"
		err := retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
			var err error
			committed, err = s.committedOffsets(ctx, partitions)
			return err
		})
		if err != nil {
			return err
		}
		return s.runStatic(ctx, partitions, committed)
	}
	return s.runGroup(ctx)
}

// runStatic reads every partition until Close, starting at the committed
// offsets where a bounded source of a group has them.
func (s *Source) runStatic(ctx context.Context, tps []topicPartition, committed map[topicPartition]int64) error {
	var starts map[topicPartition]int64
	what := "kafka source: reading start offsets"
	err := retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
		var err error
		starts, err = s.startOffsets(ctx, tps, committed)
		return err
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tp := range tps {
		if _, err := s.startReader(ctx, &s.wg, s.parts[tp], starts[tp]); err != nil {
			return err
		}
	}
	s.assigned.Store(true)
	s.signal()
	return nil
}

// startReader starts a reader goroutine for p at offset and makes it p's
// current one. The caller holds s.mu.
func (s *Source) startReader(ctx context.Context, wg *sync.WaitGroup, p *part, offset int64) (*partReader, error) {
	if p.next.Load() < 0 {
		p.next.Store(offset)
	}
	if _, ok := s.from[p.tp]; !ok {
		s.from[p.tp] = offset
	}
	rd := &partReader{end: p.end, start: offset}
	p.cur.Store(rd)
	if p.end >= 0 && offset >= p.end {
		return rd, nil // nothing to read: done already
	}
	rd.r = kafka.NewReader(kafka.ReaderConfig{
		Brokers:        s.opts.brokers,
		Topic:          p.tp.topic,
		Partition:      p.tp.partition,
		Dialer:         s.dialer,
		MinBytes:       1,
		MaxBytes:       16 << 20,
		MaxWait:        fetchMaxWait,
		ReadBackoffMin: 100 * time.Millisecond,
		ReadBackoffMax: 2 * time.Second,
		ErrorLogger:    s.debugLogger(),
	})
	if err := rd.r.SetOffset(offset); err != nil {
		// SetOffset fails only on a reader in a group, which this is not.
		rd.r.Close()
		return nil, fmt.Errorf("%s: set offset %d: %w", p.tp, offset, err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer rd.r.Close()
		if err := panics.Call(func() error { s.readPartition(ctx, p, rd); return nil }); err != nil {
			s.fail(err)
		}
	}()
	return rd, nil
}

// readPartition feeds p's messages to Read until ctx ends or a bounded
// partition reaches its end. kafka-go's Reader reconnects by itself; its
// errors are logged once per outage.
func (s *Source) readPartition(ctx context.Context, p *part, rd *partReader) {
	failing := false
	for {
		m, err := rd.r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
				s.log.Warn("kafka source: cannot fetch; retrying", "partition", p.tp.String(), "error", err.Error())
				failing = true
			}
			continue
		}
		if failing {
			s.log.Info("kafka source: fetching again", "partition", p.tp.String())
			failing = false
		}
		p.times.fetched(&m)
		var marker bool
		if looksLikeMarker(&m) {
			if marker, err = s.isMarker(ctx, p.tp, m.Offset); err != nil {
				return // ctx ended
			}
		}
		select {
		case s.msgs <- fetched{p: p, rd: rd, msg: m, marker: marker}:
		case <-ctx.Done():
			return
		}
		if rd.end >= 0 && m.Offset+1 >= rd.end {
			return
		}
	}
}

// debugLogger takes kafka-go's error logs: the reader and the group log
// every failed attempt, which the source already reports once per outage.
func (s *Source) debugLogger() kafka.Logger {
	return kafka.LoggerFunc(func(msg string, args ...any) { s.log.Debug(fmt.Sprintf(msg, args...)) })
}

// fail hands Read an error that stops the source; the first one wins.
func (s *Source) fail(err error) {
	select {
	case s.fatal <- err:
	default:
	}
	s.signal()
}

// signal wakes a Read waiting for messages, to look at the assignment.
func (s *Source) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Read returns up to max changes: it waits for a first message, then takes
// what else arrives within a short linger.
func (s *Source) Read(ctx context.Context, max int) (*row.Batch, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.opened {
		return nil, errors.New("read before open")
	}
	if max <= 0 {
		max = defaultBatch
	}
	b := row.NewBatch(min(max, 256), s.rows.width)
	// Each change's topic/partition/offset, for the errors it may cause
	// downstream.
	positions := row.NewPositions(min(max, 256), "/")
	b.Origin = positions
	var lingerC <-chan time.Time
	for b.Len() < max {
		var f fetched
		switch {
		case s.pending != nil:
			f, s.pending = *s.pending, nil
		case b.Len() == 0 && lingerC == nil:
			if s.done() {
				s.err = io.EOF
				return nil, io.EOF
			}
			select {
			case f = <-s.msgs:
			case <-s.changed:
				continue
			case err := <-s.fatal:
				s.err = fmt.Errorf("kafka source: %w", err)
				return nil, s.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		default:
			if lingerC == nil {
				t := time.NewTimer(linger)
				defer t.Stop()
				lingerC = t.C
			}
			select {
			case f = <-s.msgs:
			default:
				if s.done() {
					s.err = io.EOF
					return b, io.EOF
				}
				select {
				case f = <-s.msgs:
				case <-s.changed:
					continue
				case <-lingerC:
					return b, nil
				case <-ctx.Done():
					return b, nil
				}
			}
		}
		if f.rd != f.p.cur.Load() || f.msg.Offset < f.p.next.Load() {
			// From a reader of a generation that ended, or already
			// returned by one: the partition's current reader has it.
			continue
		}
		if f.marker {
			f.p.next.Store(f.msg.Offset + 1)
			continue
		}
		before := b.Len()
		err := s.rows.build(&f.msg, b)
		if err == nil && b.Len() > max && before > 0 {
			// One message's changes never straddle two batches, so that
			// a position always falls between messages.
			b.Changes = b.Changes[:before]
			s.pending = &f
			break
		}
		if err != nil {
			if errors.As(err, new(*connector.UnavailableError)) {
				// Not the message's fault (the schema registry is away):
				// the run fails and reads it again after a restart.
				err = fmt.Errorf("%s/%d/%d: %w", f.msg.Topic, f.msg.Partition, f.msg.Offset, err)
				s.pending = &f
				s.err = err
				if b.Len() > 0 {
					return b, nil
				}
				return nil, err
			}
			if err := s.rejectMessage(&f.msg, err); err != nil {
				s.pending = &f
				s.err = err
				if b.Len() > 0 {
					return b, nil
				}
				return nil, err
			}
		}
		positions.Mark(b.Len(), f.p.name, f.msg.Offset)
		f.p.next.Store(f.msg.Offset + 1)
		f.p.times.read(&f.msg)
		if f.msg.HighWaterMark > 0 {
			f.p.hw.Store(f.msg.HighWaterMark)
		}
		s.bytes.Add(int64(len(f.msg.Key) + len(f.msg.Value)))
	}
	return b, nil
}

// done reports whether a bounded source has read every partition it owns
// up to its end.
func (s *Source) done() bool {
	if !s.opts.bounded || !s.assigned.Load() || len(s.msgs) > 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.parts {
		if p.cur.Load() != nil && p.next.Load() < p.end {
			return false
		}
	}
	return true
}

// rejectMessage hands a message the format refused to the on_error
// policy, and returns the error that stops the source, if any.
func (s *Source) rejectMessage(m *kafka.Message, err error) error {
	bad := connector.BadRecord{
		Position: fmt.Sprintf("%s/%d/%d", m.Topic, m.Partition, m.Offset),
		Raw:      m.Value,
		Err:      err,
	}
	if s.reject == nil {
		return bad
	}
	return s.reject(bad)
}

// Close stops the readers and leaves the group. It is safe after a failed
// or no Open, and twice.
func (s *Source) Close(ctx context.Context) error {
	if s.err == nil {
		s.err = errors.New("read after close")
	}
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("kafka source: close: %w", ctx.Err())
	}
	s.transport.CloseIdleConnections()
	return nil
}

// Replays implements connector.Replayer: a restored run reads every
// partition on from the checkpoint's offsets, in offset order (the
// partitions interleave differently).
func (s *Source) Replays() string { return "" }

var (
	_ connector.Source         = (*Source)(nil)
	_ connector.Positioner     = (*Source)(nil)
	_ connector.Replayer       = (*Source)(nil)
	_ connector.Committer      = (*Source)(nil)
	_ connector.MetadataSource = (*Source)(nil)
	_ connector.Meter          = (*Source)(nil)
	_ connector.Lagger         = (*Source)(nil)
)
