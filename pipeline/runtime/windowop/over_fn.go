package windowop

import (
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// FuncKind is a row function of an OVER window.
type FuncKind uint8

const (
	Lag FuncKind = iota
	Lead
	RowNumber
	Rank
	DenseRank
	// NTile, PercentRank and CumeDist need the whole partition: batch
	// mode only, as in Flink ("... Function is not supported in stream
	// mode").
	NTile
	PercentRank
	CumeDist
)

var funcNames = [...]string{Lag: "LAG", Lead: "LEAD", RowNumber: "ROW_NUMBER", Rank: "RANK", DenseRank: "DENSE_RANK",
	NTile: "NTILE", PercentRank: "PERCENT_RANK", CumeDist: "CUME_DIST"}

func (k FuncKind) String() string {
	if int(k) < len(funcNames) {
		return funcNames[k]
	}
	return fmt.Sprintf("FuncKind(%d)", k)
}

// RowFunc is a function of a row's place in its partition rather than of
// its frame (Flink lets none of them take a frame):
//
//   - LAG(x, Offset, default): column Arg of the row Offset rows before,
//     else column Default of the current row (-1: NULL);
//   - LEAD, the same Offset rows after (batch mode only, as in Flink);
//   - ROW_NUMBER: the row's position, from 1 (BIGINT);
//   - RANK and DENSE_RANK (BIGINT): 1 + the rows, or the distinct times,
//     before the row's time;
//   - NTILE(Offset) (BIGINT): the row's bucket, 1 to Offset, of its
//     partition's rows in order cut into Offset buckets whose sizes
//     differ by at most one, the larger first (batch mode only);
//   - PERCENT_RANK (DOUBLE): (RANK - 1) / (rows - 1), 0 for one row;
//     CUME_DIST (DOUBLE): the rows up to the row's last peer / rows; by
//     position instead (rows up to the row) when NTILE shares the
//     window, whose ROWS frame Flink then gives it (batch mode only).
//
// In batch mode each row is one position in its partition sorted by time
// (ties in arrival order), as Flink's batch over frames are. In streaming,
// with the default RANGE frame, the peers of a time see one value,
// computed once all of them are in, as Flink's accumulators give it: LAG
// reads Offset rows back from the last peer (its default too), and RANK
// and DENSE_RANK are the count of rows up to the last peer. ROW_NUMBER is
// a ROWS frame's (Flink gives it one): each row its position.
type RowFunc struct {
	Kind                 FuncKind
	Arg, Offset, Default int
}

// checkFuncs checks the row functions and sizes the input and LAG's
// history they need.
func (g *OverAgg) checkFuncs() error {
	for _, f := range g.spec.Funcs {
		switch f.Kind {
		case Lag, Lead:
			if f.Offset < 0 || f.Arg < 0 {
				return fmt.Errorf("over aggregate: %s($%d, %d): bad argument or offset", f.Kind, f.Arg, f.Offset)
			}
			g.width = max(g.width, f.Arg+1, f.Default+1)
			if f.Kind == Lag {
				g.maxLag = max(g.maxLag, f.Offset)
			} else if !g.opt.Batch {
				return fmt.Errorf("over aggregate: LEAD reads rows not yet arrived: batch mode only")
			}
		case RowNumber, Rank, DenseRank:
		case NTile, PercentRank, CumeDist:
			if !g.opt.Batch {
				return fmt.Errorf("over aggregate: %s needs the whole partition: batch mode only", f.Kind)
			}
			if f.Kind == NTile && f.Offset < 1 {
				return fmt.Errorf("over aggregate: NTILE(%d): the bucket count must be positive", f.Offset)
			}
		default:
			return fmt.Errorf("over aggregate: unknown row function %s", f.Kind)
		}
	}
	return nil
}

// arrival reports whether rows are processed as they arrive: ordered by
// processing time, outside batch mode (which sorts by the time column).
func (g *OverAgg) arrival() bool { return g.spec.ProcTime && !g.opt.Batch }

// emitArrived processes the rows of one input batch ordered by processing
// time, in arrival order. A bounded RANGE frame makes the rows of one
// time (the time column's value, in milliseconds as Flink's timers count)
// peers, as ProcTimeRangeBoundedPrecedingFunction does for the rows of
// one millisecond; ROWS frames and RANGE UNBOUNDED see each row alone, as
// ProcTimeRowsBoundedPrecedingFunction and ProcTimeUnboundedPrecedingFunction
// do.
func (g *OverAgg) emitArrived(out operator.Emitter) error {
	rows := g.ready
	alone := g.spec.Rows || g.spec.Preceding == Unbounded
	for i := 0; i < len(rows); {
		j := i + 1
		if !alone {
			ms := rows[i].r[g.spec.TimeCol].Micros() / 1000
			for j < len(rows) && rows[j].r[g.spec.TimeCol].Micros()/1000 == ms {
				j++
			}
		}
		if err := g.step(rows[i:j], 0, out); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// funcs computes the row functions of rows, one step's (all of one time;
// base is the first one's index in a LEAD run), into g.fnv.
func (g *OverAgg) funcs(rows []overRow, base int) {
	fs := g.spec.Funcs
	nf := len(fs)
	if nf == 0 {
		return
	}
	g.group++
	g.fnv = slices.Grow(g.fnv[:0], len(rows)*nf)[:len(rows)*nf]
	for i, x := range rows {
		p := x.p
		if p.group != g.group {
			p.group, p.start = g.group, p.rows
			p.times++
		}
		p.rows++
		p.last = i
		g.remember(p, x.r)
		v := g.fnv[i*nf : (i+1)*nf]
		for j, f := range fs {
			switch f.Kind {
			case Lag:
				v[j] = g.lag(p, f, x.r)
			case Lead, NTile, PercentRank, CumeDist:
				v[j] = g.leads[(base+i)*nf+j]
			case RowNumber:
				v[j] = row.BigIntValue(p.rows)
			case Rank:
				v[j] = row.BigIntValue(p.start + 1)
			case DenseRank:
				v[j] = row.BigIntValue(p.times)
			}
		}
	}
	if g.opt.Batch || g.spec.Rows {
		return
	}
	// Streaming RANGE: the peers take the values after the last of them.
	for i, x := range rows {
		p, v := x.p, g.fnv[i*nf:(i+1)*nf]
		for j, f := range fs {
			switch f.Kind {
			case Lag:
				v[j] = g.lag(p, f, rows[p.last].r)
			case Rank, DenseRank:
				v[j] = row.BigIntValue(p.rows)
			}
		}
	}
}

// lag is LAG's value for p's last remembered row r.
func (g *OverAgg) lag(p *overPart, f RowFunc, r row.Row) row.Value {
	if f.Offset == 0 {
		return r[f.Arg]
	}
	if h := p.hist.n - 1 - f.Offset; h >= 0 {
		return p.hist.at(h)[f.Arg]
	}
	if f.Default >= 0 {
		return r[f.Default]
	}
	return row.NullValue
}

// remember keeps r, and the maxLag rows before it, for LAG.
func (g *OverAgg) remember(p *overPart, r row.Row) {
	if g.maxLag == 0 {
		return
	}
	p.hist.push(r)
	if p.hist.n > g.maxLag+1 {
		p.hist.pop()
	}
}

// hasLead reports a function that needs the whole partition: LEAD,
// NTILE, PERCENT_RANK, CUME_DIST.
func (g *OverAgg) hasLead() bool {
	return slices.ContainsFunc(g.spec.Funcs, func(f RowFunc) bool {
		return f.Kind == Lead || f.Kind == NTile || f.Kind == PercentRank || f.Kind == CumeDist
	})
}

// emitAll emits every waiting row at the end of a batch run with LEAD
// (or another function of the whole partition): all rows in time order,
// LEAD's values read ahead in each partition.
func (g *OverAgg) emitAll(out operator.Emitter) error {
	var all []overRow
	for g.queue.Len() > 0 {
		x := g.take(g.queue.Pop().slot)
		x.p.waiting--
		all = append(all, x)
	}
	fs := g.spec.Funcs
	nf := len(fs)
	g.leads = make([]row.Value, len(all)*nf)
	byPart := map[*overPart][]int{}
	for i, x := range all {
		byPart[x.p] = append(byPart[x.p], i)
	}
	byPosition := cumeByPosition(fs)
	for _, idx := range byPart {
		// peersOf gives the first and past-the-last position of the
		// rows of pos's time.
		peersOf := func(pos int) (int, int) {
			ts := all[idx[pos]].r[g.spec.TimeCol].Micros()
			lo, hi := pos, pos+1
			for lo > 0 && all[idx[lo-1]].r[g.spec.TimeCol].Micros() == ts {
				lo--
			}
			for hi < len(idx) && all[idx[hi]].r[g.spec.TimeCol].Micros() == ts {
				hi++
			}
			return lo, hi
		}
		for pos, i := range idx {
			for j, f := range fs {
				if f.Kind != Lead {
					if f.Kind == NTile || f.Kind == PercentRank || f.Kind == CumeDist {
						lo, hi := peersOf(pos)
						g.leads[i*nf+j] = wholeFunc(f, pos, len(idx), lo, hi, byPosition)
					}
					continue
				}
				v := row.NullValue
				switch {
				case pos+f.Offset < len(idx):
					v = all[idx[pos+f.Offset]].r[f.Arg]
				case f.Default >= 0:
					v = all[i].r[f.Default]
				}
				g.leads[i*nf+j] = v
			}
		}
	}
	for i := 0; i < len(all); {
		ts := all[i].r[g.spec.TimeCol].Micros()
		j := i + 1
		for j < len(all) && all[j].r[g.spec.TimeCol].Micros() == ts {
			j++
		}
		if err := g.step(all[i:j], i, out); err != nil {
			return err
		}
		i = j
	}
	g.leads = nil
	return nil
}

// cumeByPosition reports that CUME_DIST counts the rows up to the row,
// not up to its last peer: NTILE shares its window, and Flink computes
// them in one ROWS frame (conformance sql29-rank-family-*; beside
// ROW_NUMBER it stays by peers, sql29-cume-dist-row-number).
func cumeByPosition(fs []RowFunc) bool {
	return slices.ContainsFunc(fs, func(f RowFunc) bool { return f.Kind == NTile })
}

// wholeFunc is NTILE's, PERCENT_RANK's or CUME_DIST's value for the row
// at position pos (from 0) of a partition of n rows, its peers at
// positions [lo, hi).
func wholeFunc(f RowFunc, pos, n int, lo, hi int, byPosition bool) row.Value {
	switch f.Kind {
	case NTile:
		return row.BigIntValue(ntile(pos, n, f.Offset))
	case PercentRank:
		if n <= 1 {
			return row.DoubleValue(0)
		}
		return row.DoubleValue(float64(lo) / float64(n-1))
	}
	if byPosition {
		hi = pos + 1
	}
	return row.DoubleValue(float64(hi) / float64(n))
}

// ntile is the bucket (from 1) of the row at position pos of n rows cut
// into buckets: n / buckets rows each, the first n % buckets one more.
func ntile(pos, n, buckets int) int64 {
	size, extra := n/buckets, n%buckets
	if size == 0 {
		return int64(pos + 1)
	}
	if big := extra * (size + 1); pos < big {
		return int64(pos/(size+1) + 1)
	} else {
		return int64(extra + (pos-big)/size + 1)
	}
}
