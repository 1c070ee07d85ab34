package mysql

import (
	"fmt"
	"strconv"
	"strings"
)

// binlogPos is a place in the server's binary log: a file and the byte
// offset of an event in it.
type binlogPos struct {
	File string `json:"file"`
	Pos  uint32 `json:"pos"`
}

func (p binlogPos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Pos) }

// compare orders positions of one server: by the file's sequence number
// (the digits after its last dot, which may outgrow their zero padding),
// then by offset.
func (p binlogPos) compare(q binlogPos) int {
	if p.File != q.File {
		pb, pn := splitLogName(p.File)
		qb, qn := splitLogName(q.File)
		if pb == qb && pn >= 0 && qn >= 0 {
			if pn != qn {
				return cmpInt(pn, qn)
			}
		} else {
			return strings.Compare(p.File, q.File)
		}
	}
	return cmpInt(int64(p.Pos), int64(q.Pos))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// splitLogName splits mariadb-bin.000012 into mariadb-bin and 12; n is
// -1 when the name has no numeric extension.
func splitLogName(name string) (base string, n int64) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, -1
	}
	v, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return name, -1
	}
	return name[:i], v
}

// cdcState is what a checkpoint keeps of a binlog source: where the
// binlog is to be read from, and while the snapshot is not done, how far
// it got.
type cdcState struct {
	// Snapshot is true until every table's snapshot is handed on.
	Snapshot bool `json:"snapshot,omitempty"`
	// Binlog is where reading resumes: the start of the transaction a
	// batch ended in (Skip of its row changes already handed on), or
	// the event after the last one read. During the snapshot it is the
	// snapshot's position, where the binlog is read from once it is done.
	Binlog binlogPos `json:"binlog"`
	Skip   int64     `json:"skip,omitempty"`
	// GTID is the server's GTID set of the transactions read (before
	// Binlog), in its flavor's form; "" when the server logs none.
	GTID string `json:"gtid,omitempty"`
	// Captured lists the tables captured, as db.table, sorted.
	Captured []string `json:"captured"`
	// Stop, with stop: latest, is the end of the binlog the first run
	// saw: reading ends there.
	Stop *binlogPos `json:"stop,omitempty"`
	// Tables is the snapshot's progress per table, and the positions
	// each part of a table was read as of, while a resumed snapshot's
	// parts are not all behind the binlog read.
	Tables []tableProgress `json:"tables,omitempty"`
}

// tableProgress is the snapshot of one table: the primary key of the
// last row handed on, whether the table is done, and the segments its
// rows were read in. A snapshot interrupted (a crash, a lost connection)
// goes on in a new transaction as of a later binlog position: the rows
// read before are as of the first position, those after as of the new
// one. Until the binlog read passes the latest position, a change is
// applied to a row only when it comes after the position its segment
// was read as of.
type tableProgress struct {
	Table string    `json:"table"`
	Done  bool      `json:"done,omitempty"`
	Last  []*string `json:"last,omitempty"`
	Segs  []segment `json:"segments,omitempty"`
}

// segment holds the rows whose primary key is at most Hi (nil: every
// key above the segment before), read as of AsOf.
type segment struct {
	Hi   []*string `json:"hi,omitempty"`
	AsOf binlogPos `json:"as_of"`
}

// interrupt closes the table's segment in progress at the last row
// handed on, so that the snapshot goes on as of another position. A
// segment that holds no row is dropped.
func (t *tableProgress) interrupt() {
	if t.Done || len(t.Segs) == 0 {
		return
	}
	last := &t.Segs[len(t.Segs)-1]
	if last.Hi != nil {
		return // already closed
	}
	if t.Last == nil || (len(t.Segs) > 1 && sameKey(t.Segs[len(t.Segs)-2].Hi, t.Last)) {
		t.Segs = t.Segs[:len(t.Segs)-1]
		return
	}
	last.Hi = t.Last
}

func sameKey(a, b []*string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || (a[i] != nil && *a[i] != *b[i]) {
			return false
		}
	}
	return true
}

// lastAsOf is the latest position a segment of any table was read as
// of, and whether segments differ at all: while they do not, every
// change from the binlog applies.
func (st *cdcState) lastAsOf() (binlogPos, bool) {
	var last binlogPos
	varied := false
	for _, t := range st.Tables {
		for _, s := range t.Segs {
			if s.AsOf != st.Binlog {
				varied = true
			}
			if last.File == "" || s.AsOf.compare(last) > 0 {
				last = s.AsOf
			}
		}
	}
	return last, varied
}

// progress returns the table's progress, nil when the snapshot never
// reached it.
func (st *cdcState) progress(table string) *tableProgress {
	for i := range st.Tables {
		if st.Tables[i].Table == table {
			return &st.Tables[i]
		}
	}
	return nil
}
