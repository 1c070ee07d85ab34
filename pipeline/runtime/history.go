package runtime

import (
	"slices"
	"sync"
	"time"
)

// CheckpointHistory is how many completed checkpoints a run remembers.
const CheckpointHistory = 20

// CheckpointRecord is one completed checkpoint.
type CheckpointRecord struct {
	ID int64
	// At is when it completed; Duration the time from its trigger until
	// it was stored.
	At       time.Time
	Duration time.Duration
	// Size is its file's bytes (0 without a store).
	Size int64
	// Alignment is the longest a union (a UNION ALL, a join's inputs)
	// held an input that delivered the barrier until every other one
	// did: time the data waited for the checkpoint.
	Alignment time.Duration
	// Final: the checkpoint taken when the run ended.
	Final bool
}

// CheckpointLog keeps a run's last CheckpointHistory checkpoints, safe to
// read while it runs.
type CheckpointLog struct {
	mu     sync.Mutex
	recent []CheckpointRecord // oldest first
	// aligning is the longest alignment of each checkpoint in flight,
	// by id.
	aligning map[int64]time.Duration
}

// aligned notes that a union aligned barrier id in d.
func (l *CheckpointLog) aligned(id int64, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.aligning == nil {
		l.aligning = map[int64]time.Duration{}
	}
	l.aligning[id] = max(l.aligning[id], d)
}

// add records checkpoint id, completed now, with what st says of the
// newest checkpoint (the coordinator stored it there just before).
func (l *CheckpointLog) add(id int64, final bool, st *CheckpointStats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := CheckpointRecord{ID: id, At: time.Unix(0, st.LastAt.Load()), Duration: time.Duration(st.LastDuration.Load()),
		Size: st.LastSize.Load(), Alignment: l.aligning[id], Final: final}
	for k := range l.aligning {
		if k <= id {
			delete(l.aligning, k)
		}
	}
	if len(l.recent) == CheckpointHistory {
		l.recent = slices.Delete(l.recent, 0, 1)
	}
	l.recent = append(l.recent, r)
}

// Recent returns the last checkpoints, oldest first.
func (l *CheckpointLog) Recent() []CheckpointRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recent)
}
