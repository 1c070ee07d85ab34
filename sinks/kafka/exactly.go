package kafka

// Exactly-once output without transactions (kafka-go has no
// transactional producer, and its consumers would not hide aborted
// messages). A late write of a killed run is fenced off by producer epoch
// (fence.go).
//
// When the planner says the sink's input replays by record
// (connector.Replay.ByRecord: every change names its source record, and a
// restored run gives the same changes for the same records, each input's
// records in order) and the run keeps state, every message carries two
// headers:
//
//	etld-sink  <pipeline>/<sink>@<instance>   who wrote it: the instance is
//	           the state directory's (connector.RunInfo.Instance), so two
//	           pipelines, or a run after the state was removed, never match
//	etld-pos   <input>@<record>[#<n>]         the source record (a Kafka
//	           partition and offset, a file and line) and, for a record
//	           with several changes, the change's index among them
//
// Each change goes to a partition that depends only on itself: its key's
// hash, or for keyless messages its input and record number (blocks of
// keylessBlock records per partition), never on timing. So a partition's
// messages from one input are in record order, and what a crash leaves in
// a partition is, for each input, a prefix of what the partition would
// have had.
//
// At each checkpoint the sink snapshots, per partition, the offset after
// the last message the brokers acknowledged, and the positions it has yet
// to pass (a checkpoint taken while a restored run is still skipping must
// keep them: the messages they stand for lie before that offset). A
// restored run reads each partition from there to its end and keeps, for
// each input, the last position with its own etld-sink, or the
// checkpoint's when later; then, while writing, it skips every change at
// or before that position in the partition it goes to: those the crashed
// run had already written. A run that restored no checkpoint
// of this sink (killed before its first one) reads from the instance's
// creation time (less clockSlack) instead. Changes past every position are
// written as usual.

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkarecords"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

const (
	headerSink = "etld-sink"
	headerPos  = "etld-pos"
	// keylessBlock is how many consecutive records of one input go to one
	// partition when messages have no key (or the partitioner ignores
	// it), in exactly-once mode: a function of the record, as the sticky
	// partitioner is of timing.
	keylessBlock = 1024
	// clockSlack widens the scan of a run that restores no checkpoint
	// back from the instance's creation: record timestamps are the
	// writer's clock, or the broker's with LogAppendTime.
	clockSlack = 5 * time.Minute
	// snapshotVersion leads the sink's checkpoint state.
	snapshotVersion = 1
)

// pos is a change's place among its input's changes: the record number
// and its index among the record's changes.
type pos struct {
	num int64
	sub int32
}

func (a pos) after(b pos) bool { return a.num > b.num || a.num == b.num && a.sub > b.sub }

// appendPos appends the etld-pos header value of a change.
func appendPos(b []byte, input string, p pos) []byte {
	b = append(b, input...)
	b = append(b, '@')
	b = strconv.AppendInt(b, p.num, 10)
	if p.sub > 0 {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(p.sub), 10)
	}
	return b
}

// parsePos reads an etld-pos header value; the input may hold '@' itself.
func parsePos(v []byte) (string, pos, bool) {
	s := string(v)
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return "", pos{}, false
	}
	input, rest := s[:at], s[at+1:]
	var p pos
	num, sub, hasSub := strings.Cut(rest, "#")
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return "", pos{}, false
	}
	p.num = n
	if hasSub {
		k, err := strconv.ParseInt(sub, 10, 32)
		if err != nil || k <= 0 {
			return "", pos{}, false
		}
		p.sub = int32(k)
	}
	return input, p, true
}

// dedup is the sink's exactly-once state between Open and Close, used
// from Write's goroutine.
type dedup struct {
	id []byte // the etld-sink header value
	// written[p] maps an input to the last position a crashed run wrote
	// to partition p; an entry goes once a later change of its input
	// passes it, and the map with the last one.
	written []map[string]pos
	pending int
	skipped int64
	// The previous change's input and place, to number a record's
	// changes; parked holds the last place of every other input seen, as
	// inputs interleave batch by batch under a UNION ALL.
	prevInput string
	prev      pos
	started   bool
	parked    map[string]pos
	// The last input hashed, for keyless partitions.
	hashed     string
	hash       uint32
	warnedNone bool
}

// next numbers a change of record num of input: its index among the
// record's changes, which arrive one after the other within the input
// (another input's changes may come between them).
func (d *dedup) next(input string, num int64) pos {
	if d.started && input != d.prevInput {
		if d.parked == nil {
			d.parked = map[string]pos{}
		}
		d.parked[d.prevInput] = d.prev
		d.prev, d.started = d.parked[input]
	}
	p := pos{num: num}
	if d.started && num == d.prev.num {
		p.sub = d.prev.sub + 1
	}
	d.prevInput, d.prev, d.started = input, p, true
	return p
}

// skip reports whether the change at p of input, bound for partition
// part, was written by a crashed run, and forgets what later changes of
// the input no longer need.
func (d *dedup) skip(part int, input string, p pos) bool {
	if d.pending == 0 {
		return false
	}
	m := d.written[part]
	last, ok := m[input]
	if !ok {
		return false
	}
	if !p.after(last) {
		d.skipped++
		return true
	}
	delete(m, input)
	d.pending--
	return false
}

// note records a message found in partition part.
func (d *dedup) note(part int, headers []kafka.Header) {
	var mine bool
	var value []byte
	for _, h := range headers {
		switch h.Key {
		case headerSink:
			mine = string(h.Value) == string(d.id)
		case headerPos:
			value = h.Value
		}
	}
	if !mine || value == nil {
		return
	}
	input, p, ok := parsePos(value)
	if !ok {
		return
	}
	m := d.written[part]
	if last, seen := m[input]; !seen || p.after(last) {
		m[input] = p
	}
}

// keyless picks the partition of a change without a key (or under the
// round-robin partitioner) from its record alone.
func (d *dedup) keyless(input string, num int64, n int, roundRobin bool) int {
	if input != d.hashed || d.hash == 0 {
		h := fnv.New32a()
		h.Write([]byte(input))
		d.hashed, d.hash = input, h.Sum32()|1
	}
	block := num
	if !roundRobin {
		block = num / keylessBlock
	}
	return int((uint64(d.hash) + uint64(block)) % uint64(n))
}

// ExactlyOnce implements connector.ExactlyOnceSink.
func (s *Sink) ExactlyOnce() (bool, string) {
	switch {
	case s.eoOff:
		return false, "exactly_once: off"
	case !s.replay.ByRecord:
		return false, s.replay.Why
	}
	return true, ""
}

// SetRun implements connector.RunAware.
func (s *Sink) SetRun(r connector.RunInfo) { s.run = r }

// Snapshot implements connector.SinkSnapshotter: in exactly-once mode, for
// every partition the offset after the last acknowledged message (Flush
// ran just before) and the positions still to pass, each an input, a
// record number and a change index. Otherwise nothing.
func (s *Sink) Snapshot(ctx context.Context) ([]byte, error) {
	if s.eo == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := []byte{snapshotVersion}
	b = binary.AppendUvarint(b, uint64(len(s.parts)))
	for i, p := range s.parts {
		b = binary.AppendVarint(b, p.next)
		m := s.eo.written[i]
		b = binary.AppendUvarint(b, uint64(len(m)))
		for _, input := range slices.Sorted(maps.Keys(m)) {
			b = binary.AppendUvarint(b, uint64(len(input)))
			b = append(b, input...)
			b = binary.AppendVarint(b, m[input].num)
			b = binary.AppendUvarint(b, uint64(m[input].sub))
		}
	}
	return b, nil
}

// Restore implements connector.SinkSnapshotter.
func (s *Sink) Restore(state []byte) error {
	s.resumeAt, s.carried = nil, nil
	if len(state) == 0 {
		return nil
	}
	if state[0] != snapshotVersion {
		return fmt.Errorf("kafka sink %q: checkpoint state of version %d, want %d", s.name, state[0], snapshotVersion)
	}
	damaged := fmt.Errorf("kafka sink %q: damaged checkpoint state", s.name)
	b := state[1:]
	uvarint := func() (uint64, bool) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	varint := func() (int64, bool) {
		v, k := binary.Varint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	n, ok := uvarint()
	if !ok || n > uint64(len(b)) {
		return damaged
	}
	next := make([]int64, n)
	carried := make([]map[string]pos, n)
	for i := range next {
		if next[i], ok = varint(); !ok {
			return damaged
		}
		count, ok := uvarint()
		if !ok || count > uint64(len(b)) {
			return damaged
		}
		carried[i] = make(map[string]pos, count)
		for range count {
			l, ok := uvarint()
			if !ok || l > uint64(len(b)) {
				return damaged
			}
			input := string(b[:l])
			b = b[l:]
			num, ok1 := varint()
			sub, ok2 := uvarint()
			if !ok1 || !ok2 || sub > math.MaxInt32 {
				return damaged
			}
			carried[i][input] = pos{num: num, sub: int32(sub)}
		}
	}
	if len(b) != 0 {
		return damaged
	}
	s.resumeAt, s.carried = next, carried
	return nil
}

// openDedup starts exactly-once mode when it applies: it reads what
// earlier runs of this instance wrote after the restored checkpoint and
// sets every partition's next offset. Called by Open once the partitions
// are known.
func (s *Sink) openDedup(ctx context.Context) error {
	if yes, _ := s.ExactlyOnce(); !yes || !s.run.Resumable || s.run.Instance == "" {
		return nil
	}
	d := &dedup{
		id:      []byte(s.run.Pipeline + "/" + s.name + "@" + s.run.Instance),
		written: make([]map[string]pos, len(s.parts)),
	}
	restored := s.run.Restored && s.resumeAt != nil
	for i, p := range s.parts {
		d.written[i] = map[string]pos{}
		from := int64(-1)
		if restored && i < len(s.resumeAt) {
			from = s.resumeAt[i]
		}
		var carried map[string]pos
		if restored && i < len(s.carried) {
			carried = s.carried[i]
		}
		var end int64
		err := retry.Do(ctx, retry.Backoff{Initial: 200 * time.Millisecond, Max: 5 * time.Second}, s.log,
			fmt.Sprintf("kafka sink %q: read what earlier runs wrote to topic %s partition %d", s.name, s.topic, p.id),
			func(ctx context.Context) error {
				clear(d.written[i])
				maps.Copy(d.written[i], carried)
				var err error
				end, err = s.scan(ctx, d, p.id, from)
				return err
			})
		if err != nil {
			return s.errorf("partition %d: %w", p.id, err)
		}
		p.next = end
	}
	for _, m := range d.written {
		d.pending += len(m)
	}
	s.eo = d
	s.log.Info("kafka sink writes exactly once: each message names its source record",
		"topic", s.topic, "restored", restored, "inputs_found", d.pending)
	return nil
}

// scan reads partition part from offset from (-1: from the instance's
// creation time) to its end, noting this sink's messages in d. It returns
// the partition's end offset.
func (s *Sink) scan(ctx context.Context, d *dedup, part int, from int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*s.timeout)
	defer cancel()
	first, end, err := s.offsets(ctx, part)
	if err != nil {
		return 0, err
	}
	if from < 0 {
		if from, err = s.offsetAt(ctx, part, s.run.Since.Add(-clockSlack), end); err != nil {
			return 0, err
		}
	}
	from = max(from, first)
	for from < end {
		res, err := s.client.Fetch(ctx, &kafka.FetchRequest{
			Topic: s.topic, Partition: part, Offset: from,
			MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 500 * time.Millisecond,
		})
		if err != nil {
			return 0, err
		}
		if res.Error != nil {
			return 0, fmt.Errorf("fetch from offset %d: %w", from, res.Error)
		}
		start := from
		err = kafkarecords.EachRecord(res.Records, func(rec *kafka.Record, marker bool) {
			if rec.Offset < from {
				return
			}
			if !marker {
				d.note(part, rec.Headers)
			}
			from = rec.Offset + 1
		})
		if err != nil {
			return 0, fmt.Errorf("read from offset %d: %w", from, err)
		}
		if from == start {
			// Nothing readable at from (a compacted gap): the end offset
			// the broker gives now tells whether anything is left.
			if res.HighWatermark <= from {
				break
			}
			return 0, fmt.Errorf("no record readable at offset %d of %d", from, res.HighWatermark)
		}
	}
	return end, nil
}

// offsets returns the first and end offsets of partition part, in two
// requests: brokers refuse a partition named twice in one.
func (s *Sink) offsets(ctx context.Context, part int) (first, end int64, err error) {
	get := func(req kafka.OffsetRequest) (kafka.PartitionOffsets, error) {
		res, err := s.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{s.topic: {req}}})
		if err != nil {
			return kafka.PartitionOffsets{}, err
		}
		for _, po := range res.Topics[s.topic] {
			if po.Partition == part {
				return po, po.Error
			}
		}
		return kafka.PartitionOffsets{}, fmt.Errorf("no offsets for partition %d", part)
	}
	f, err := get(kafka.FirstOffsetOf(part))
	if err != nil {
		return 0, 0, err
	}
	l, err := get(kafka.LastOffsetOf(part))
	if err != nil {
		return 0, 0, err
	}
	return f.FirstOffset, l.LastOffset, nil
}

// offsetAt returns the first offset of partition part whose timestamp is
// at or after t, or end when there is none.
func (s *Sink) offsetAt(ctx context.Context, part int, t time.Time, end int64) (int64, error) {
	res, err := s.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		s.topic: {kafka.TimeOffsetOf(part, t)},
	}})
	if err != nil {
		return 0, err
	}
	for _, po := range res.Topics[s.topic] {
		if po.Partition != part {
			continue
		}
		if po.Error != nil {
			return 0, po.Error
		}
		for off := range po.Offsets {
			if off >= 0 {
				return off, nil
			}
		}
		return end, nil
	}
	return 0, fmt.Errorf("no offset at %s for partition %d", t.Format(time.RFC3339), part)
}

// recordOf returns the source record of change i of b and numbers the
// change among the record's; ok is false when no one record made it.
func (d *dedup) recordOf(o row.RecordOrigin, i int) (string, pos, bool) {
	if o == nil {
		return "", pos{}, false
	}
	input, num, ok := o.Record(i)
	if !ok {
		return "", pos{}, false
	}
	return input, d.next(input, num), true
}
