package file

// What the source tells the runtime and the planner beside its rows:
// progress (Meter, Sizer), whether a restore replays, the columns it can
// leave undecoded, batches given back, and the files it reads.

import (
	"slices"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Bytes is the number of bytes read from the files so far
// (connector.Meter); a restored source counts from its position on.
func (s *Source) Bytes() int64 { return s.rd.read.Load() + s.bytesRead.Load() }

// Size is how far the source has read into its files and their total
// size as Open found them (connector.Sizer); 0, 0 before Open and for a
// followed source, whose input has no end. done runs ahead of the rows
// by at most the read buffer.
func (s *Source) Size() (done, total int64) {
	total = s.total.Load()
	if total == 0 {
		return 0, 0
	}
	if s.bulk != nil {
		return min(s.bytesRead.Load(), total), total
	}
	if d := s.parDone.Load(); d >= 0 {
		// A parallel read's reader runs ahead by the blocks in flight:
		// count what Read returned.
		return min(d, total), total
	}
	done = max(0, s.base.Load()+s.rd.read.Load())
	return min(done, total), total
}

// Replays implements connector.Replayer: a restored run reads on from
// the checkpoint's offset in the same files, line by line. A followed file
// does not qualify: after a rotation a new file takes the name and its
// line numbers start again, so a position would name two records.
func (s *Source) Replays() string {
	if s.fl != nil {
		return "a followed file may be rotated, and the new file's line numbers start again"
	}
	return ""
}

var (
	_ connector.Source     = (*Source)(nil)
	_ connector.Sizer      = (*Source)(nil)
	_ connector.Positioner = (*Source)(nil)
	_ connector.Replayer   = (*Source)(nil)
	_ connector.Meter      = (*Source)(nil)
)

// SetColumns passes the planner's projection on to the format, when it
// can leave columns undecoded.
func (s *Source) SetColumns(needed []bool) {
	if pd, ok := s.bulk.(connector.ProjectingBulkDecoder); ok {
		pd.SetColumns(needed)
	}
	if pd, ok := s.dec.(connector.ProjectingDecoder); ok {
		pd.SetColumns(needed)
		s.projected = slices.Contains(needed, false)
	}
}

// SetPaths implements connector.NestedSource when the format decodes
// fields of ROW columns into columns of their own
// (connector.NestedDecoder): the rows grow by the gap and a column per
// path.
func (s *Source) SetPaths(paths []connector.FieldPath, gap int) bool {
	nd, ok := s.dec.(connector.NestedDecoder)
	if !ok || s.bulk != nil || s.updating || s.columns || !nd.DecodePaths(paths, gap) {
		return false
	}
	s.width += gap + len(paths)
	s.paths = true
	return true
}

// SelectColumns implements connector.ColumnSource when the format
// decodes some columns only (connector.ColumnDecoder).
func (s *Source) SelectColumns(cols []int) bool {
	cd, ok := s.dec.(connector.ColumnDecoder)
	if !ok || s.updating || noSelect || !cd.DecodeColumns(cols) {
		return false
	}
	s.width, s.columns = len(cols), true
	selected.Add(1)
	return true
}

// noSelect turns SelectColumns down (tests: the read of whole rows that
// a read of picked columns must match); selected counts the sources
// that took it.
var (
	noSelect bool
	selected atomic.Int64
)

// sparesKept bounds the batches given back that a source keeps: a few
// more than the blocks in flight hold.
const sparesKept = 64

// Recycle implements connector.BatchRecycler: a decode worker writes its
// next batch into b (parallel.go).
func (s *Source) Recycle(b *row.Batch) {
	if !s.fullRows.Load() {
		return // only a ColumnDecoder writes every value of a row
	}
	select {
	case s.spares <- b:
		recycled.Add(1)
	default:
	}
}

// ReadFiles implements connector.FileReader: path, and rotated_path
// where a followed source looks for its rotated files.
func (s *Source) ReadFiles() (patterns []string, follow bool) {
	patterns = []string{s.pattern}
	if s.fl != nil && s.fl.rotatedPath != "" {
		patterns = append(patterns, s.fl.rotatedPath)
	}
	return patterns, s.fl != nil
}

// recycled counts the batches Recycle took, for tests.
var recycled atomic.Int64

var (
	_ connector.ProjectingSource = (*Source)(nil)
	_ connector.NestedSource     = (*Source)(nil)
	_ connector.MappingSource    = (*Source)(nil)
	_ connector.ColumnSource     = (*Source)(nil)
	_ connector.BatchRecycler    = (*Source)(nil)
	_ connector.FileReader       = (*Source)(nil)
)
