package plan

// Projection pushdown below an event-time OVER, as below a join
// (join_reads.go): the OVER reads of its input the partition keys, the
// time, its aggregates' arguments and filters, its row functions'
// columns and the input columns its readers read of its output (its
// output is its input's columns, then its results). The others reach it
// as NULL: a scan under it leaves them undecoded, a Calc computes NULL,
// and the OVER's waiting rows, its batch sort and its output carry a
// byte for each. Rows keep their width, so that no column index moves.

// pruneOver works out which columns of its input the OVER n reads
// (overOp.reads); nil (every one) when its readers' reads are not known.
func (rs joinReaders) pruneOver(n *Node) {
	o := n.overed()
	if o == nil || n.Input == nil {
		return
	}
	used := rs.usedOf(n)
	if used == nil {
		return
	}
	reads := make([]bool, n.Input.Schema.Len())
	mark := func(i int) {
		if i >= 0 && i < len(reads) {
			reads[i] = true
		}
	}
	for i, ok := range used {
		if ok {
			mark(i)
		}
	}
	s := o.spec
	for _, k := range s.Keys {
		mark(k)
	}
	mark(s.TimeCol)
	mark(n.Input.TimeAttr)
	for _, a := range s.Aggs {
		mark(a.Arg)
		if a.HasFilter {
			mark(a.Filter)
		}
	}
	for _, f := range s.Funcs {
		mark(f.Arg)
		mark(f.Default)
	}
	o.reads = reads
}

// projectOvers has an event-time OVER emit only the columns a Calc over
// it picks, when that Calc is its one reader, only picks columns and
// filters nothing, as projectJoins has a join do (join_reads.go): the
// Calc then passes the rows on, and a row is built once, of the columns
// read, instead of whole (every input column and every result) and then
// projected. Labels, state IDs and fingerprints are unchanged, and so is
// the OVER's state (it holds input rows, not output ones).
func (p *Plan) projectOvers(nodes []*Node) {
	readers := p.readerCounts(nodes)
	for _, m := range nodes {
		c := m.calc()
		if c == nil || c.filter != nil || m.Input == nil || readers[m.Input] != 1 {
			continue
		}
		o := m.Input.overed()
		cols := columnsOf(c.project)
		if o == nil || cols == nil {
			continue
		}
		o.spec.Output = cols
		c.project = nil
	}
}
