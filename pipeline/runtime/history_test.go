package runtime

import (
	"testing"
	"time"
)

// The log keeps the last CheckpointHistory checkpoints, each with the
// longest alignment any union reported for it.
func TestCheckpointLogKeepsTheLast(t *testing.T) {
	var l CheckpointLog
	var st CheckpointStats
	l.aligned(3, 5*time.Millisecond)
	l.aligned(3, 7*time.Millisecond)
	l.aligned(3, 2*time.Millisecond)
	for id := int64(1); id <= CheckpointHistory+5; id++ {
		st.LastSize.Store(100 * id)
		st.LastDuration.Store(int64(time.Duration(id) * time.Millisecond))
		st.LastAt.Store(time.Unix(1000+id, 0).UnixNano())
		l.add(id, id == CheckpointHistory+5, &st)
	}
	got := l.Recent()
	if len(got) != CheckpointHistory || got[0].ID != 6 || got[len(got)-1].ID != CheckpointHistory+5 || !got[len(got)-1].Final || got[0].Final {
		t.Fatalf("kept %d from %d to %d", len(got), got[0].ID, got[len(got)-1].ID)
	}
	for _, r := range got {
		if r.Size != 100*r.ID || r.Duration != time.Duration(r.ID)*time.Millisecond || !r.At.Equal(time.Unix(1000+r.ID, 0)) {
			t.Errorf("record %+v", r)
		}
	}
	l2 := CheckpointLog{}
	l2.aligned(3, 7*time.Millisecond)
	l2.aligned(9, time.Millisecond)
	l2.add(3, false, &st)
	if r := l2.Recent()[0]; r.Alignment != 7*time.Millisecond {
		t.Errorf("alignment %v, want the longest, 7ms", r.Alignment)
	}
	if len(l2.aligning) != 1 {
		t.Errorf("alignments left %v, want only the one of checkpoint 9", l2.aligning)
	}
}
