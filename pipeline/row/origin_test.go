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
