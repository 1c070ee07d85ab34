package nexmark

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Projection and nested projection pushdown (connector.ProjectingSource,
// connector.NestedSource): a plan that reads the person, auction and bid
// ROWs only through their fields (bid.price) gets those fields as columns
// of their own, straight from the generated event, and no ROW is encoded
// for the query to decode again (q0's generator-side cost was about half
// encoding ROWs and reading fields out of them). The draws are the same
// either way: only what is built of them changes.

// SetColumns implements connector.ProjectingSource: a ROW column the plan
// does not read is NULL, and not encoded.
func (s *Source) SetColumns(needed []bool) {
	s.needed = needed
}

// SetPaths implements connector.NestedSource for the fields of the three
// ROWs (one level: they hold no ROW); each row then has gap columns after
// the four physical ones, which it leaves NULL, and one column per path,
// the field's value in the event of that type, NULL in the others.
func (s *Source) SetPaths(paths []connector.FieldPath, gap int) bool {
	if gap < 0 {
		return false
	}
	for _, p := range paths {
		if p.Column < 1 || p.Column > 3 || len(p.Fields) != 1 || p.Fields[0] < 0 || p.Fields[0] >= fieldCount[p.Column-1] {
			return false
		}
	}
	s.paths, s.gap = paths, gap
	return true
}

// fieldCount is how many fields the person, auction and bid ROWs have.
var fieldCount = [3]int{8, 10, 7}

// wantsColumn says whether the plan reads physical column i.
func (s *Source) wantsColumn(i int) bool { return s.needed == nil || i < len(s.needed) && s.needed[i] }

// field is field f of e's ROW, as appendEvent encodes it.
func field(e *event, f int) row.Value {
	ts := func() row.Value { return row.TimestampValue(e.ts * 1000) }
	switch e.typ {
	case typePerson:
		p := &e.person
		switch f {
		case 0:
			return row.BigIntValue(p.id)
		case 1:
			return row.StringValue(p.name)
		case 2:
			return row.StringValue(p.email)
		case 3:
			return row.StringValue(p.creditCard)
		case 4:
			return row.StringValue(p.city)
		case 5:
			return row.StringValue(p.state)
		case 6:
			return ts()
		default:
			return row.StringValue(p.extra)
		}
	case typeAuction:
		a := &e.auction
		switch f {
		case 0:
			return row.BigIntValue(a.id)
		case 1:
			return row.StringValue(a.itemName)
		case 2:
			return row.StringValue(a.desc)
		case 3:
			return row.BigIntValue(a.initialBid)
		case 4:
			return row.BigIntValue(a.reserve)
		case 5:
			return ts()
		case 6:
			return row.TimestampValue(a.expires * 1000)
		case 7:
			return row.BigIntValue(a.seller)
		case 8:
			return row.BigIntValue(a.category)
		default:
			return row.StringValue(a.extra)
		}
	}
	b := &e.bid
	switch f {
	case 0:
		return row.BigIntValue(b.auction)
	case 1:
		return row.BigIntValue(b.bidder)
	case 2:
		return row.BigIntValue(b.price)
	case 3:
		return row.StringValue(b.channel)
	case 4:
		return row.StringValue(b.url)
	case 5:
		return ts()
	default:
		return row.StringValue(b.extra)
	}
}

var (
	_ connector.ProjectingSource = (*Source)(nil)
	_ connector.NestedSource     = (*Source)(nil)
)
