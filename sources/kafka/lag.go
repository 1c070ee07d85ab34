package kafka

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/pipeline/connector"
)

// partTimes are the timestamps of a partition's messages that its lag
// in seconds is made of: the last one Read returned, and the newest one
// its reader fetched with the high watermark the broker gave with it.
// The lag in seconds is known when that fetched message is the
// partition's last and a message of it was read: the fetched one's time
// less the last read one's.
type partTimes struct {
	readAt                  atomic.Int64 // Unix microseconds, unread before the first
	fetchedAt, fetchedUntil atomic.Int64 // fetchedUntil: the fetch's high watermark, -1 if more followed
}

// unread is partTimes.readAt before Read returned a message of the
// partition.
const unread = math.MinInt64

func newPartTimes(t *partTimes) {
	t.readAt.Store(unread)
	t.fetchedUntil.Store(-1)
}

// fetched notes a message the partition's reader fetched.
func (t *partTimes) fetched(m *kafka.Message) {
	t.fetchedAt.Store(m.Time.UnixMicro())
	until := int64(-1)
	if m.HighWaterMark > 0 && m.Offset+1 >= m.HighWaterMark {
		until = m.HighWaterMark
	}
	t.fetchedUntil.Store(until)
}

// read notes a message Read returned.
func (t *partTimes) read(m *kafka.Message) { t.readAt.Store(m.Time.UnixMicro()) }

// PartitionLags implements connector.PartitionLagger: the partitions the
// source owns now, in name order.
func (s *Source) PartitionLags() []connector.PartitionLag {
	if !s.assigned.Load() {
		return nil
	}
	s.mu.Lock()
	var out []connector.PartitionLag
	for _, p := range s.parts {
		next, hw := p.next.Load(), p.hw.Load()
		if p.cur.Load() == nil || next < 0 || hw < 0 {
			continue
		}
		l := connector.PartitionLag{Partition: p.name, Messages: max(hw-next, 0)}
		switch until := p.times.fetchedUntil.Load(); {
		case l.Messages == 0:
			l.SecondsKnown = true
		case until >= hw && p.times.readAt.Load() != unread:
			// The reader fetched the newest message there is.
			l.Seconds = max(float64(p.times.fetchedAt.Load()-p.times.readAt.Load())/1e6, 0)
			l.SecondsKnown = true
		}
		out = append(out, l)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b connector.PartitionLag) int { return strings.Compare(a.Partition, b.Partition) })
	return out
}

var _ connector.PartitionLagger = (*Source)(nil)
