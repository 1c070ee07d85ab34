package rankop

import "github.com/etld/etld/pipeline/row"

// RankKind is the ranking function of a Top-N.
type RankKind uint8

// The ranking functions. Streaming Top-N takes ROW_NUMBER only, as Flink
// does; RANK and DENSE_RANK run in batch execution.
const (
	RowNumber RankKind = iota + 1
	Rank
	DenseRank
)

func (k RankKind) String() string {
	switch k {
	case RowNumber:
		return "ROW_NUMBER"
	case Rank:
		return "RANK"
	case DenseRank:
		return "DENSE_RANK"
	}
	return "?"
}

// RankStrategy is how a streaming Top-N keeps its state, Flink's
// RankProcessStrategy.
type RankStrategy uint8

const (
	// AppendFast: an insert-only input; only the top rows are kept
	// (AppendOnlyTopNFunction).
	AppendFast RankStrategy = iota + 1
	// Retract: any input; every row is kept, so that a retracted top row
	// is replaced by the next one (RetractableTopNFunction).
	Retract
	// UpdateFast: an updating input with an upsert key and a sort key
	// that only moves up; only the top rows are kept (UpdatableTopN).
	UpdateFast
)

func (s RankStrategy) String() string {
	switch s {
	case AppendFast:
		return "AppendFastStrategy"
	case Retract:
		return "RetractStrategy"
	case UpdateFast:
		return "UpdateFastStrategy"
	}
	return "?"
}

// SortKey is one ORDER BY column of a Top-N.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// RankSpec is a Top-N: the rows ranked Start..End (1-based, inclusive)
// within each partition, in Order.
type RankSpec struct {
	Partition  []int
	Order      []SortKey
	Start, End int64
	Kind       RankKind
	Strategy   RankStrategy
	// RowKey is the input's upsert key (UpdateFast only).
	RowKey []int
	// OutputRank appends the rank number (BIGINT) to each output row;
	// without it the operator emits Flink's "no ranking number" changes.
	OutputRank bool
	// Batch: the input is bounded and final; the ranks are emitted as +I
	// at Finish (Flink's BATCH Rank), where RANK and DENSE_RANK work too.
	Batch bool
}

// numbered reports whether the Top-N runs Flink's algorithm with rank
// numbers. A ROW_NUMBER range of one number (rn <= 1, rn = 1) runs
// without: Flink's RankNumberColumnRemoveRule drops the number from the
// Rank and appends it as a constant, so a top row replaced by another is
// -D/+I rather than -U/+U. An offset always needs the numbers.
func (s *RankSpec) numbered() bool {
	return s.Start > 1 || s.OutputRank && !s.constantNumber()
}

func (s *RankSpec) constantNumber() bool { return s.Kind == RowNumber && s.Start == s.End }

// withNumber appends the rank number to r: rank, or the range's one
// number when it is constant (the number-less algorithm passes none).
func (s *RankSpec) withNumber(r row.Row, rank int64) row.Row {
	if s.constantNumber() {
		rank = s.Start
	}
	o := make(row.Row, len(r)+1)
	copy(o, r)
	o[len(r)] = row.BigIntValue(rank)
	return o
}

// CompareRows orders two rows by keys (NULLs per key, DESC reversing).
func CompareRows(keys []SortKey, a, b row.Row) int {
	for _, k := range keys {
		va, vb := a[k.Col], b[k.Col]
		switch an, bn := va.IsNull(), vb.IsNull(); {
		case an && bn:
			continue
		case an || bn: // one NULL: where NULLs go decides
			if an == k.NullsFirst {
				return -1
			}
			return 1
		}
		c := row.Compare(va, vb)
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func sameRow(a, b row.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !row.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Partition is one partition's rows in sort order: groups of rows with
// equal sort keys, each in arrival order (Flink's TopNBuffer).
type Partition struct {
	Groups [][]row.Row
	N      int
}

// find returns the index of r's group, or where it would go, and whether
// it exists.
func (p *Partition) find(keys []SortKey, r row.Row) (int, bool) {
	lo, hi := 0, len(p.Groups)
	for lo < hi {
		m := (lo + hi) / 2
		c := CompareRows(keys, p.Groups[m][0], r)
		switch {
		case c == 0:
			return m, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// Add appends a detached copy of r to its group (a kept row must not pin
// the batch slab and read block it came from) and returns the group's
// index.
func (p *Partition) Add(keys []SortKey, r row.Row) int {
	r = row.Detach(r)
	gi, ok := p.find(keys, r)
	if ok {
		p.Groups[gi] = append(p.Groups[gi], r)
	} else {
		p.Groups = append(p.Groups, nil)
		copy(p.Groups[gi+1:], p.Groups[gi:])
		p.Groups[gi] = []row.Row{r}
	}
	p.N++
	return gi
}

// RemoveAt drops row j of group gi.
func (p *Partition) RemoveAt(gi, j int) {
	g := p.Groups[gi]
	if len(g) == 1 {
		p.Groups = append(p.Groups[:gi], p.Groups[gi+1:]...)
	} else {
		p.Groups[gi] = append(g[:j:j], g[j+1:]...)
	}
	p.N--
}
