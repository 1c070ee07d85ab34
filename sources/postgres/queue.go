package postgres

import (
	"context"
	"sync"
)

// queue hands items from a reader goroutine to Read: the reader appends
// (waiting while the queue holds limit items: backpressure reaches the
// server), Read takes everything at once. Safe for one producer and one
// consumer.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	limit  int
	notify chan struct{} // an item was added
	space  chan struct{} // items were taken
}

func newQueue[T any](limit int) *queue[T] {
	return &queue[T]{limit: limit, notify: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

// put appends items, waiting for room; false when ctx ended first.
func (q *queue[T]) put(ctx context.Context, items ...T) bool {
	for {
		q.mu.Lock()
		if len(q.items) < q.limit {
			q.items = append(q.items, items...)
			q.mu.Unlock()
			select {
			case q.notify <- struct{}{}:
			default:
			}
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-ctx.Done():
			return false
		}
	}
}

// take returns the items queued, appended to dst[:0], without waiting.
func (q *queue[T]) take(dst []T) []T {
	q.mu.Lock()
	dst = append(dst[:0], q.items...)
	clear(q.items)
	q.items = q.items[:0]
	q.mu.Unlock()
	select {
	case q.space <- struct{}{}:
	default:
	}
	return dst
}

// wait blocks until an item may have been added or ctx ends.
func (q *queue[T]) wait(ctx context.Context) error {
	select {
	case <-q.notify:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
