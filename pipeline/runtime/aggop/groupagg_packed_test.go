package aggop

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// randomKeyValue is a value of any kind a group key holds, extremes
// and edge cases often: NULL, empty and long strings, -0, wide
// decimals, the int64 range's ends.
func randomKeyValue(rnd *rand.Rand) row.Value {
	ints := []int64{0, 1, -1, 63, 64, -64, -65, 1 << 40, math.MaxInt64, math.MinInt64, rnd.Int64(), rnd.Int64N(1000) - 500}
	n := ints[rnd.IntN(len(ints))]
	switch rnd.IntN(14) {
	case 0:
		return row.NullValue
	case 1:
		return row.StringValue("")
	case 2:
		return row.StringValue(strings.Repeat("y", rnd.IntN(200)) + fmt.Sprint(n))
	case 3:
		return row.StringValue(fmt.Sprint(n % 1000))
	case 4:
		return row.BigIntValue(n)
	case 5:
		return row.IntValue(int32(n))
	case 6:
		return row.BoolValue(n&1 == 1)
	case 7:
		return row.DoubleValue([]float64{0, math.Copysign(0, -1), 1.5, math.Inf(-1), float64(n)}[rnd.IntN(5)])
	case 8:
		return row.DecimalValue(n, rnd.IntN(4))
	case 9:
		return row.Decimal128Value(row.Int128{Hi: n, Lo: uint64(rnd.Int64())}, rnd.IntN(38))
	case 10:
		return row.DateValue(int32(n))
	case 11:
		return row.TimestampValue(n)
	case 12:
		return row.BytesValue([]byte(fmt.Sprint(n)))
	default:
		return row.TimestampLTZValue(n)
	}
}

// TestPackedKeysAreKeyOfsBijection: for random keys of one to four
// columns of every kind, packing a row and packing its row.KeyOf
// encoding agree, unpacking gives row.KeyOf's bytes back, and two keys
// are equal packed exactly when they are equal in row.KeyOf's encoding.
func TestPackedKeysAreKeyOfsBijection(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	byPacked := map[string]string{}
	byCanon := map[string]string{}
	for i := range 200_000 {
		r := make(row.Row, 1+rnd.IntN(4))
		for j := range r {
			r[j] = randomKeyValue(rnd)
		}
		idx := make([]int, len(r))
		for j := range idx {
			idx[j] = j
		}
		canon := row.KeyOf(nil, r, idx)
		p := appendPacked(nil, r, idx)
		if q, err := packCanonical(nil, canon); err != nil || !bytes.Equal(p, q) {
			t.Fatalf("row %d %v: packed %x, from row.KeyOf %x (%v)", i, r, p, q, err)
		}
		if c, err := canonicalKey(nil, p); err != nil || !bytes.Equal(c, canon) {
			t.Fatalf("row %d %v: unpacked %x, row.KeyOf %x (%v)", i, r, c, canon, err)
		}
		want, got := make(row.Row, len(r)), make(row.Row, len(r))
		if err := DecodeKey(want, string(canon)); err != nil {
			t.Fatal(err)
		}
		if err := decodePacked(got, p); err != nil || !slices.Equal(got, want) {
			t.Fatalf("row %d %v: decoded packed %v, row.KeyOf's %v (%v)", i, r, got, want, err)
		}
		if c, ok := byPacked[string(p)]; ok && c != string(canon) {
			t.Fatalf("row %d %v: packed %x is also another key's", i, r, p)
		}
		if q, ok := byCanon[string(canon)]; ok && q != string(p) {
			t.Fatalf("row %d %v: one key packed two ways", i, r)
		}
		byPacked[string(p)], byCanon[string(canon)] = string(canon), string(p)
	}
	// Short keys of several columns fit the key table's entry (15 bytes).
	two := appendPacked(nil, row.Row{row.StringValue("g99999"), row.BigIntValue(9)}, []int{0, 1})
	tail := appendPacked(nil, row.Row{row.StringValue("sensor_9999999")}, []int{0})
	if len(two) > 15 || len(tail) > 15 {
		t.Fatalf("packed keys of %d and %d bytes, want at most 15", len(two), len(tail))
	}
}

// TestPackedKeysRefused: a truncated or unknown key is an error, not a
// panic nor a wrong key.
func TestPackedKeysRefused(t *testing.T) {
	for _, p := range [][]byte{{byte(row.String), 5, 'a'}, {byte(row.BigInt)}, {byte(row.BigInt), 0x80}, {0x42}, {packedEscape, byte(row.BigInt), 0, 1}} {
		if c, err := canonicalKey(nil, p); err == nil {
			t.Errorf("packed %x unpacked to %x", p, c)
		}
		if err := decodePacked(make(row.Row, 1), p); err == nil {
			t.Errorf("packed %x decoded", p)
		}
	}
	for _, k := range [][]byte{{byte(row.BigInt), 0, 1, 2}, {byte(row.String)}, {byte(row.String), 0, 9, 'a'}} {
		if p, err := packCanonical(nil, k); err == nil {
			t.Errorf("key %x packed to %x", k, p)
		}
	}
}

// refRow is [STRING, STRING, BIGINT, value]: short and long strings,
// empty ones, NULL in any key column, about 3000 keys.
func refRow(rnd *rand.Rand) row.Row {
	k := rnd.IntN(3000)
	str := func(s string) row.Value {
		switch rnd.IntN(20) {
		case 0:
			return row.NullValue
		case 1:
			return row.StringValue("")
		}
		return row.StringValue(s)
	}
	n := row.BigIntValue(int64(k%11) - 5)
	if rnd.IntN(20) == 0 {
		n = row.NullValue
	}
	return row.Row{str(fmt.Sprint("k", k%97)), str(strings.Repeat("z", k%29) + fmt.Sprint(k/29)), n, row.BigIntValue(rnd.Int64N(1000))}
}

// TestGroupAggPackedKeysMatchMap: GROUP BY on a STRING and a BIGINT,
// on two STRINGs, on three columns and on a BIGINT, in batch mode (passes and row by
// row), with mini-batch and streaming row by row: each key's COUNT(*)
// and SUM at the end equal a Go map's over row.KeyOf's encoding; a
// snapshot taken halfway is byte-equal to one of an operator with
// unpacked keys (the checkpoint format is row.KeyOf's) and restores
// into either.
func TestGroupAggPackedKeysMatchMap(t *testing.T) {
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 3, ArgType: optest.TBigInt}}
	opts := map[string]GroupAggOptions{
		"batch":     {Batch: true, InsertOnly: true},
		"minibatch": {MiniBatch: true, InsertOnly: true},
		"stream":    {InsertOnly: true},
	}
	// {2}: a BIGINT with NULLs, through the integer cache's way.
	for _, keys := range [][]int{{0, 2}, {2, 0}, {0, 1}, {1, 0, 2}, {1}, {2}} {
		for name, opt := range opts {
			for _, rowByRow := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%s/rows=%v", keys, name, rowByRow), func(t *testing.T) {
					checkPackedAgainstMap(t, keys, aggs, opt, rowByRow)
				})
			}
		}
	}
}

func checkPackedAgainstMap(t *testing.T, keys []int, aggs []AggCall, opt GroupAggOptions, rowByRow bool) {
	rnd := rand.New(rand.NewPCG(11, uint64(len(keys))))
	newOp := func(packed bool) *GroupAgg {
		g := optest.Must(NewGroupAgg(keys, aggs, opt))
		g.RowByRow, g.packed = rowByRow, packed
		return g
	}
	g, plain := newOp(true), newOp(false)
	type acc struct{ n, sum int64 }
	want := map[string]acc{}
	last := map[string]acc{} // each key's latest emitted result
	record := func(out *optest.Out) {
		for _, c := range out.Rows {
			if c.Kind == row.Insert || c.Kind == row.UpdateAfter {
				last[string(row.KeyOf(nil, c.Row, seq(len(keys))))] = acc{c.Row[len(keys)].Int64(), c.Row[len(keys)+1].Int64()}
			}
		}
	}
	for i, size := range []int{1, 500, 2048, 0, 3000, 77} {
		if i == 3 {
			sp, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			sq, err := plain.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sp, sq) {
				t.Fatalf("snapshots differ: packed %d bytes, unpacked %d", len(sp), len(sq))
			}
			// Each restores the other's.
			g, plain = newOp(true), newOp(false)
			if err := g.Restore(sq); err != nil {
				t.Fatal(err)
			}
			if err := plain.Restore(sp); err != nil {
				t.Fatal(err)
			}
		}
		b := &row.Batch{}
		for range size {
			r := refRow(rnd)
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
			k := string(row.KeyOf(nil, r, keys))
			a := want[k]
			want[k] = acc{a.n + 1, a.sum + r[3].Int64()}
		}
		for _, op := range []*GroupAgg{g, plain} {
			out := &optest.Out{}
			if err := op.Process(b, out); err != nil {
				t.Fatal(err)
			}
			if opt.MiniBatch {
				if err := op.Flush(out); err != nil {
					t.Fatal(err)
				}
			}
			if op == g {
				record(out)
			}
		}
	}
	out := &optest.Out{}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	record(out)
	if g.Groups() != len(want) || len(last) != len(want) {
		t.Fatalf("%d groups, %d keys emitted, want %d", g.Groups(), len(last), len(want))
	}
	for k, a := range want {
		if last[k] != a {
			t.Fatalf("key %x: COUNT and SUM %v, want %v", k, last[k], a)
		}
	}
	sp, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sq, err := plain.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sp, sq) {
		t.Fatal("final snapshots differ")
	}
	var gp, gq [][]byte
	if err := g.SnapshotGroups(func(k int, b []byte) error { gp = append(gp, slices.Clone(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := plain.SnapshotGroups(func(k int, b []byte) error { gq = append(gq, slices.Clone(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(gp, gq, bytes.Equal) {
		t.Fatal("key groups differ")
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// BenchmarkPackKey: a key of a short STRING and a BIGINT packed, and
// encoded by row.KeyOf, per row.
func BenchmarkPackKey(b *testing.B) {
	rows := make([]row.Row, 1024)
	for i := range rows {
		rows[i] = row.Row{row.StringValue(fmt.Sprint("g", i*7)), row.BigIntValue(int64(i % 10))}
	}
	idx := []int{0, 1}
	buf := make([]byte, 0, 64<<10)
	b.Run("packed", func(b *testing.B) {
		for range b.N {
			buf = buf[:0]
			for _, r := range rows {
				buf = appendPacked(buf, r, idx)
			}
		}
	})
	b.Run("keyof", func(b *testing.B) {
		for range b.N {
			buf = buf[:0]
			for _, r := range rows {
				buf = row.KeyOf(buf, r, idx)
			}
		}
	})
}
