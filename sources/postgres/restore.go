package postgres

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
)

// What a restored run takes from its checkpoint.

// resumePoint says whether a checkpoint read from the slot and the LSN
// from which the stream must still hold every change.
func (s *Source) resumePoint() (bool, pglogrepl.LSN) {
	p := s.restored
	if p == nil {
		return false, 0
	}
	if p.Phase == phaseStream {
		done, _ := parseLSN(p.Done)
		return true, done
	}
	// A snapshot in progress: the stream must still hold the changes
	// from its oldest segment on.
	var oldest pglogrepl.LSN
	for _, t := range s.tables {
		for _, sg := range t.allSegments() {
			if l, _ := parseLSN(sg.LSN); oldest == 0 || l < oldest {
				oldest = l
			}
		}
	}
	return oldest != 0, oldest
}

// initTables sets each table's state from the restored position.
func (s *Source) initTables() error {
	s.tables = make([]tableState, len(s.caps))
	p := s.restored
	if p == nil {
		return nil
	}
	if p.Slot != s.slot {
		return fmt.Errorf("the checkpoint read slot %q and the source names slot %q: reset the pipeline's state (etld state reset) to read from the new slot anew", p.Slot, s.slot)
	}
	var names, want []string
	for _, t := range p.Tables {
		names = append(names, t.Name)
	}
	for _, c := range s.caps {
		want = append(want, c.name)
	}
	if strings.Join(names, ", ") != strings.Join(want, ", ") {
		return fmt.Errorf("the checkpoint captured tables %s and the source now names %s: reset the pipeline's state (etld state reset) to capture the new set from a new snapshot", strings.Join(names, ", "), strings.Join(want, ", "))
	}
	for i, t := range p.Tables {
		ts := &s.tables[i]
		ts.segments = append([]segment(nil), t.Segments...)
		ts.done, ts.def = t.Done, t.Columns
		if !t.Done && t.Last != nil {
			// The rows handed on under that snapshot form a segment once
			// the new snapshot, which reads the rest, hands on its first
			// chunk (readSnapshot). Until then a checkpoint keeps them as
			// the restored one did: folded into the segments here, they
			// left the checkpoint with no key to go on after, and the run
			// restored from it read the table from its start again.
			lsn, err := parseLSN(t.LSN)
			if err != nil {
				return fmt.Errorf("table %s: %w", t.Name, err)
			}
			ts.lsn, ts.last = lsn, t.Last
		}
		s.caps[i].relDef = t.Columns
	}
	return nil
}

// allSegments is the table's segments with the one of the snapshot
// being read, if it handed on rows.
func (ts *tableState) allSegments() []segment {
	if ts.lsn == 0 || ts.last == nil {
		return ts.segments
	}
	return append(slices.Clip(ts.segments), segment{UpTo: ts.last, LSN: ts.lsn.String()})
}
