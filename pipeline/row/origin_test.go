package row

import "testing"

func TestPositions(t *testing.T) {
	p := NewPositions(4, ":")
	p.Mark(1, "a.csv", 2)
	p.Mark(3, "a.csv", 3) // one record, two changes
	p.Mark(4, "b.csv", 1) // the next file
	p.Mark(5, "b.csv", 2)
	p.Mark(4, "", 0) // the last record given back
	tests := []struct {
		i    int
		want string
	}{{0, "a.csv:2"}, {1, "a.csv:3"}, {2, "a.csv:3"}, {3, "b.csv:1"}, {4, ""}, {-1, ""}}
	for _, tt := range tests {
		if got := p.Position(tt.i); got != tt.want {
			t.Errorf("Position(%d) = %q, want %q", tt.i, got, tt.want)
		}
	}
	if got := (Sequence{Prefix: "datagen g row ", First: 11}).Position(2); got != "datagen g row 13" {
		t.Errorf("Sequence.Position(2) = %q", got)
	}
}

// BenchmarkPositionsMark: what a source pays per record to name it
// (a 1024-row batch's Positions, one Mark a record).
func BenchmarkPositionsMark(b *testing.B) {
	b.ReportAllocs()
	name := "data/sensor.csv"
	for b.Loop() {
		p := NewPositions(1024, ":")
		for i := range 1024 {
			p.Mark(i+1, name, int64(i+1))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/record")
}

func TestRecord(t *testing.T) {
	p := NewPositions(4, "/")
	p.Mark(1, "t/0", 7)
	p.Mark(3, "t/1", 2) // one record, two changes
	tests := []struct {
		o     RecordOrigin
		i     int
		input string
		num   int64
		ok    bool
	}{
		{p, 0, "t/0", 7, true},
		{p, 1, "t/1", 2, true},
		{p, 2, "t/1", 2, true},
		{p, 3, "", 0, false},
		{p, -1, "", 0, false},
		{Sequence{Prefix: "gen", First: 11}, 2, "gen", 13, true},
		{Sequence{Prefix: "gen", First: 11}, -1, "", 0, false},
	}
	for _, tt := range tests {
		input, num, ok := tt.o.Record(tt.i)
		if input != tt.input || num != tt.num || ok != tt.ok {
			t.Errorf("%T.Record(%d) = %q, %d, %v; want %q, %d, %v", tt.o, tt.i, input, num, ok, tt.input, tt.num, tt.ok)
		}
	}
}

// Records counts a record that decoded into several changes once, and
// two inputs' records apart even where their numbers meet.
func TestPositionsRecords(t *testing.T) {
	p := NewPositions(8, ":")
	p.Mark(1, "a.json", 1)
	p.Mark(3, "a.json", 2) // an update: -U and +U
	p.Mark(4, "a.json", 3)
	p.Mark(5, "b.json", 3)
	p.Mark(7, "b.json", 4)
	if got := p.Records(); got != 5 {
		t.Errorf("Records() = %d, want 5", got)
	}
	p.Mark(4, "", 0) // the last records given back
	if got := p.Records(); got != 3 {
		t.Errorf("Records() after giving back = %d, want 3", got)
	}
	if got := RecordsIn(&Batch{Changes: make([]Change, 3)}); got != 3 {
		t.Errorf("RecordsIn of a batch without an origin = %d, want its 3 changes", got)
	}
}

// MarkAt keeps each record's byte offset and its file's identity: the
// same name read in two files (a log and the one rotated in under its
// name) are two inputs, told apart by Locate.
func TestPositionsLocate(t *testing.T) {
	p := NewPositions(4, ":")
	p.MarkAt(1, "app.log", "2049:17", 40, 1200)
	p.MarkAt(3, "app.log", "2049:18", 1, 0) // rotated: line 1 of a new file, two changes
	p.MarkAt(4, "app.log", "2049:18", 2, 35)
	tests := []struct {
		i    int
		want Location
		ok   bool
	}{
		{0, Location{File: "app.log", ID: "2049:17", Line: 40, Offset: 1200}, true},
		{2, Location{File: "app.log", ID: "2049:18", Line: 1, Offset: 0}, true},
		{3, Location{File: "app.log", ID: "2049:18", Line: 2, Offset: 35}, true},
		{4, Location{}, false},
	}
	for _, tt := range tests {
		if got, ok := p.Locate(tt.i); got != tt.want || ok != tt.ok {
			t.Errorf("Locate(%d) = %+v, %v; want %+v, %v", tt.i, got, ok, tt.want, tt.ok)
		}
	}
	if got := p.Records(); got != 3 {
		t.Errorf("Records() = %d, want 3", got)
	}
	if got := p.Position(2); got != "app.log:1" {
		t.Errorf("Position(2) = %q, want app.log:1", got)
	}
	plain := NewPositions(2, ":")
	plain.Mark(1, "a.csv", 1)
	if _, ok := plain.Locate(0); ok {
		t.Error("Locate of a record marked without an offset says it knows one")
	}
}

// TestPositionsMarkAtRun: a run of one-change records of one file (the
// mark taken without looking at the spans) locates each record, and a
// change of file in the run, by name or by identity of the same length,
// or given with an equal name built anew, is seen.
func TestPositionsMarkAtRun(t *testing.T) {
	p := NewPositions(8, ":")
	name := "app.log"
	again := string([]byte("app.log")) // equal, not the same string
	marks := []struct {
		n        int
		input    string
		id       string
		line     int64
		offset   int64
		wantSpan int // spans after the mark
	}{
		{1, name, "1:1", 1, 0, 1},
		{2, name, "1:1", 2, 10, 1},
		{3, again, "1:1", 3, 20, 1},
		{4, name, "1:2", 1, 0, 2}, // rotated: another identity, the same length
		{5, "b.log", "1:2", 1, 0, 3},
		{6, "b.log", "1:2", 2, 7, 3},
		{8, "b.log", "1:2", 3, 9, 3}, // a record of two changes
	}
	for _, m := range marks {
		p.MarkAt(m.n, m.input, m.id, m.line, m.offset)
		if len(p.spans) != m.wantSpan {
			t.Fatalf("after marking %d: %d spans, want %d", m.n, len(p.spans), m.wantSpan)
		}
	}
	want := []Location{
		{"app.log", "1:1", 1, 0}, {"app.log", "1:1", 2, 10}, {"app.log", "1:1", 3, 20}, {"app.log", "1:2", 1, 0},
		{"b.log", "1:2", 1, 0}, {"b.log", "1:2", 2, 7}, {"b.log", "1:2", 3, 9}, {"b.log", "1:2", 3, 9},
	}
	for i, w := range want {
		if got, ok := p.Locate(i); !ok || got != w {
			t.Errorf("Locate(%d) = %+v, %v; want %+v", i, got, ok, w)
		}
	}
	p.MarkAt(6, "b.log", "1:2", 0, 0) // the last record given back
	p.MarkAt(7, "b.log", "1:2", 4, 11)
	if got, ok := p.Locate(6); !ok || got != (Location{"b.log", "1:2", 4, 11}) {
		t.Errorf("after a record given back, Locate(6) = %+v, %v", got, ok)
	}
	if _, ok := p.Locate(7); ok {
		t.Errorf("Locate(7) of a change given back says it knows it")
	}
}

// BenchmarkPositionsMarkAt: what a file source pays per record to
// locate it.
func BenchmarkPositionsMarkAt(b *testing.B) {
	b.ReportAllocs()
	name, id := "data/sensor.csv", "2049:17"
	for b.Loop() {
		p := NewPositions(1024, ":")
		for i := range 1024 {
			p.MarkAt(i+1, name, id, int64(i+1), int64(i*60))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/record")
}
