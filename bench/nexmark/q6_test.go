package nexmark_test

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// q6 computes Nexmark q6's final table in Go, without etld's SQL or
// operators: Flink cannot run the query (no OVER aggregate over an
// updating input), so this is what checks etld's. For each auction, its
// winning bid: the highest price among the bids on it within its
// lifetime (between its dateTime and expires, both included), the first
// of equal ones in the stream (a Top-1 keeps its row against a tie).
// Then per seller, the winning bids ordered by their dateTime, each with
// the average price (BIGINT: truncated) of itself and the 10 before it.
func q6(t *testing.T) []string {
	type auction struct {
		start, end time.Time
		seller     int64
	}
	type winner struct {
		price int64
		at    time.Time
	}
	auctions := map[int64]auction{}
	var bids [][]row.Value
	eachEvent(t, func(kind int64, fs []row.Value) {
		switch kind {
		case 1:
			auctions[fs[0].Int64()] = auction{fs[5].Time(), fs[6].Time(), fs[7].Int64()}
		case 2:
			bids = append(bids, fs)
		}
	})
	// Every auction comes before its bids in the stream, so the join's
	// matches come in the bids' order.
	won := map[int64]winner{}
	for _, b := range bids {
		id, price, at := b[0].Int64(), b[2].Int64(), b[5].Time()
		a, ok := auctions[id]
		if !ok || at.Before(a.start) || at.After(a.end) {
			continue
		}
		if w, ok := won[id]; !ok || price > w.price {
			won[id] = winner{price, at}
		}
	}
	bySeller := map[int64][]winner{}
	for id, w := range won {
		s := auctions[id].seller
		bySeller[s] = append(bySeller[s], w)
	}
	var out []string
	for seller, ws := range bySeller {
		slices.SortFunc(ws, func(a, b winner) int { return a.at.Compare(b.at) })
		for i := range ws {
			var sum, n int64
			for _, w := range ws[max(0, i-10) : i+1] {
				sum += w.price
				n++
			}
			out = append(out, join(seller, sum/n))
		}
		// Two winning bids of a seller at the same instant would make
		// the order, and so the averages, depend on arrival: the test's
		// rate gives every event its own millisecond.
		for i := 1; i < len(ws); i++ {
			if ws[i].at.Equal(ws[i-1].at) {
				t.Fatalf("seller %d has two winning bids at %s: the order is not defined", seller, ws[i].at)
			}
		}
	}
	return out
}
