package aggop

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// wdec is a DECIMAL(38, scale) from its text.
func wdec(text string, scale int) row.Value {
	v, err := row.ParseText(text, row.Type{ID: row.Decimal, Precision: 38, Scale: scale})
	if err != nil {
		panic(err)
	}
	return v
}

func TestAggResultType(t *testing.T) {
	tests := []struct {
		call AggCall
		want string
	}{
		{AggCall{Func: CountStar, Arg: -1}, "BIGINT NOT NULL"},
		{AggCall{Func: Count, Arg: 0, ArgType: optest.TString}, "BIGINT NOT NULL"},
		{AggCall{Func: CountDistinct, Arg: 0, ArgType: optest.TDouble}, "BIGINT NOT NULL"},
		{AggCall{Func: Sum, Arg: 0, ArgType: optest.TInt}, "INT"},
		{AggCall{Func: Sum, Arg: 0, ArgType: row.Type{ID: row.BigInt, NotNull: true}}, "BIGINT"},
		{AggCall{Func: Sum, Arg: 0, ArgType: optest.TFloat}, "FLOAT"},
		{AggCall{Func: Sum, Arg: 0, ArgType: optest.TDouble}, "DOUBLE"},
		{AggCall{Func: Sum, Arg: 0, ArgType: optest.TDec(10, 2)}, "DECIMAL(38, 2)"},
		{AggCall{Func: SumDistinct, Arg: 0, ArgType: optest.TDec(5, 0)}, "DECIMAL(38, 0)"},
		{AggCall{Func: Avg, Arg: 0, ArgType: optest.TInt}, "INT"},
		{AggCall{Func: Avg, Arg: 0, ArgType: optest.TBigInt}, "BIGINT"},
		{AggCall{Func: Avg, Arg: 0, ArgType: optest.TFloat}, "FLOAT"},
		{AggCall{Func: Avg, Arg: 0, ArgType: optest.TDouble}, "DOUBLE"},
		{AggCall{Func: Avg, Arg: 0, ArgType: optest.TDec(10, 2)}, "DECIMAL(38, 6)"},
		{AggCall{Func: Avg, Arg: 0, ArgType: optest.TDec(18, 8)}, "DECIMAL(38, 8)"},
		{AggCall{Func: Min, Arg: 0, ArgType: row.Type{ID: row.String, NotNull: true}}, "STRING"},
		{AggCall{Func: Max, Arg: 0, ArgType: row.Type{ID: row.Timestamp, Precision: 3}}, "TIMESTAMP(3)"},
	}
	for _, tt := range tests {
		if got := tt.call.ResultType().String(); got != tt.want {
			t.Errorf("%s over %s: ResultType = %s, want %s", tt.call, tt.call.ArgType, got, tt.want)
		}
		if err := tt.call.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", tt.call, err)
		}
	}
}

func TestAggValidate(t *testing.T) {
	tests := []struct {
		call AggCall
		want string
	}{
		{AggCall{Func: CountStar, Arg: 2}, "takes no argument"},
		{AggCall{Func: Sum, Arg: -1, ArgType: optest.TInt}, "negative"},
		{AggCall{Func: Sum, Arg: 0, ArgType: optest.TString}, "not numeric"},
		{AggCall{Func: Avg, Arg: 0, ArgType: row.Type{ID: row.Boolean}}, "not numeric"},
		{AggCall{Func: Max, Arg: 0, ArgType: row.Type{ID: row.Null}}, "cannot be aggregated"},
		{AggCall{Func: Sum, Arg: 0, ArgType: optest.TDec(39, 2)}, "out of range"},
		{AggCall{Func: AggFunc(99), Arg: 0, ArgType: optest.TInt}, "unknown aggregate"},
	}
	for _, tt := range tests {
		err := tt.call.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate = %v, want an error containing %q", tt.call, err, tt.want)
		}
	}
}

// TestAggValues runs one aggregate over values in a fresh store and checks
// the result after each accumulate (+) or retract (-) step.
func TestAggValues(t *testing.T) {
	type step struct {
		add  bool
		v    row.Value
		want string
	}
	add := func(v row.Value, want string) step { return step{true, v, want} }
	sub := func(v row.Value, want string) step { return step{false, v, want} }
	i32, i64, f64 := row.IntValue, row.BigIntValue, row.DoubleValue
	f32 := row.FloatValue
	tests := []struct {
		name  string
		call  AggCall
		steps []step
	}{
		{"sum int wraps like Java", AggCall{Func: Sum, ArgType: optest.TInt}, []step{
			add(i32(math.MaxInt32), "2147483647"), add(i32(1), "-2147483648"), sub(i32(1), "2147483647")}},
		{"sum bigint null when all values retracted", AggCall{Func: Sum, ArgType: optest.TBigInt}, []step{
			add(row.NullValue, "null"), add(i64(5), "5"), add(i64(-5), "0"), sub(i64(5), "-5"), sub(i64(-5), "null")}},
		{"sum float adds in float32", AggCall{Func: Sum, ArgType: optest.TFloat}, []step{
			add(f32(16777216), "1.6777216E7"), add(f32(1), "1.6777216E7")}},
		{"sum double", AggCall{Func: Sum, ArgType: optest.TDouble}, []step{
			add(f64(1.5), "1.5"), add(f64(2.25), "3.75"), sub(f64(1.5), "2.25")}},
		{"sum decimal", AggCall{Func: Sum, ArgType: optest.TDec(10, 2)}, []step{
			add(optest.Dec(400, 2), "4.00"), add(optest.Dec(-1050, 2), "-6.50")}},
		{"sum decimal past 18 digits", AggCall{Func: Sum, ArgType: optest.TDec(18, 0)}, []step{
			add(optest.Dec(999_999_999_999_999_999, 0), "999999999999999999"),
			add(optest.Dec(1, 0), "1000000000000000000"),
			add(optest.Dec(999_999_999_999_999_999, 0), "1999999999999999999"),
			add(optest.Dec(math.MaxInt64, 0), "11223372036854775806"),
			sub(optest.Dec(math.MaxInt64, 0), "1999999999999999999")}},
		{"sum decimal overflow is null and recovers", AggCall{Func: Sum, ArgType: optest.TDec(38, 0)}, []step{
			add(wdec("99999999999999999999999999999999999999", 0), "99999999999999999999999999999999999999"),
			add(optest.Dec(1, 0), "null"),
			add(wdec("99999999999999999999999999999999999999", 0), "null"),
			sub(wdec("99999999999999999999999999999999999999", 0), "null"),
			sub(optest.Dec(1, 0), "99999999999999999999999999999999999999"),
			add(wdec("-99999999999999999999999999999999999990", 0), "9")}},
		{"avg int truncates toward zero", AggCall{Func: Avg, ArgType: optest.TInt}, []step{
			add(i32(1), "1"), add(i32(2), "1"), sub(i32(1), "2"), add(i32(-5), "-1")}},
		{"avg bigint sums in bigint", AggCall{Func: Avg, ArgType: optest.TBigInt}, []step{
			add(i64(math.MaxInt64), "9223372036854775807"), add(i64(1), "-4611686018427387904")}},
		{"avg float", AggCall{Func: Avg, ArgType: optest.TFloat}, []step{
			add(f32(1), "1.0"), add(f32(2), "1.5"), add(f32(2), "1.6666666")}},
		{"avg double", AggCall{Func: Avg, ArgType: optest.TDouble}, []step{
			add(f64(1), "1.0"), add(f64(2), "1.5"), add(row.NullValue, "1.5"), sub(f64(1), "2.0"), sub(f64(2), "null")}},
		{"avg decimal rounds half up at scale 6", AggCall{Func: Avg, ArgType: optest.TDec(10, 2)}, []step{
			add(optest.Dec(100, 2), "1.000000"), add(optest.Dec(200, 2), "1.500000"), add(optest.Dec(200, 2), "1.666667"),
			add(optest.Dec(-1000, 2), "-1.250000")}},
		{"avg decimal negative half", AggCall{Func: Avg, ArgType: optest.TDec(10, 6)}, []step{
			add(optest.Dec(-1, 6), "-0.000001"), add(optest.Dec(0, 6), "-0.000001"), add(optest.Dec(0, 6), "0.000000")}},
		{"avg decimal of huge sums", AggCall{Func: Avg, ArgType: optest.TDec(38, 0)}, []step{
			add(wdec("99999999999999999999999999999999999999", 0), "null"), // 38 digits × 10^6 do not fit DECIMAL(38, 6)
			add(wdec("-99999999999999999999999999999999999999", 0), "0.000000"),
			sub(wdec("-99999999999999999999999999999999999999", 0), "null"),
			sub(wdec("99999999999999999999999999999999999999", 0), "null"),
			add(wdec("1000000000000000000000000000000", 0), "1000000000000000000000000000000.000000"),
			add(optest.Dec(0, 0), "500000000000000000000000000000.000000")}},
		{"avg decimal past 64 bits rounds as Flink's divide", AggCall{Func: Avg, ArgType: optest.TDec(38, 10)}, []step{
			add(wdec("1234567890123456789012345678.0123456789", 10), "1234567890123456789012345678.0123456789"),
			add(optest.Dec(0, 10), "617283945061728394506172839.0061728395"),
			add(optest.Dec(0, 10), "411522630041152263004115226.0041152263")}},
		{"avg decimal(18, 0) past int64", AggCall{Func: Avg, ArgType: optest.TDec(18, 0)}, []step{
			add(optest.Dec(999_999_999_999_999_999, 0), "999999999999999999.000000"),
			add(optest.Dec(0, 0), "499999999999999999.500000")}},
		{"avg decimal rounds at scale 12", AggCall{Func: Avg, ArgType: optest.TDec(18, 12)}, []step{
			add(optest.Dec(999_999_999_999_999_999, 12), "999999.999999999999"),
			add(optest.Dec(999_999_999_999_999_999, 12), "999999.999999999999"),
			add(optest.Dec(2, 12), "666666.666666666667")}},
		{"avg decimal beyond 64 bits", AggCall{Func: Avg, ArgType: optest.TDec(18, 12)}, slices.Repeat([]step{
			add(optest.Dec(900_000_000_000_000_001, 12), "900000.000000000001")}, 12)},
		{"min string", AggCall{Func: Min, ArgType: optest.TString}, []step{
			add(row.StringValue("b"), "b"), add(row.StringValue("a"), "a"), add(row.StringValue("c"), "a"),
			sub(row.StringValue("a"), "b"), sub(row.StringValue("b"), "c"), sub(row.StringValue("c"), "null")}},
		{"max with duplicates", AggCall{Func: Max, ArgType: optest.TBigInt}, []step{
			add(i64(5), "5"), add(i64(5), "5"), add(i64(3), "5"), sub(i64(5), "5"), sub(i64(5), "3")}},
		{"max retraction before accumulation", AggCall{Func: Max, ArgType: optest.TBigInt}, []step{
			add(i64(1), "1"), sub(i64(9), "1"), add(i64(9), "1"), add(i64(9), "9")}},
		{"count distinct", AggCall{Func: CountDistinct, ArgType: optest.TString}, []step{
			add(row.StringValue("a"), "1"), add(row.StringValue("a"), "1"), add(row.StringValue("b"), "2"),
			sub(row.StringValue("a"), "2"), sub(row.StringValue("a"), "1"), add(row.NullValue, "1")}},
		{"sum distinct", AggCall{Func: SumDistinct, ArgType: optest.TBigInt}, []step{
			add(i64(2), "2"), add(i64(2), "2"), add(i64(3), "5"), sub(i64(2), "5"), sub(i64(2), "3")}},
		// TIME, as Flink's MIN, MAX and COUNT(DISTINCT) take it
		// (itcase29-agg-count-distinct-types).
		{"count distinct time", AggCall{Func: CountDistinct, ArgType: row.Type{ID: row.Time}}, []step{
			add(row.TimeOfDayValue(1_000_000), "1"), add(row.TimeOfDayValue(1_000_000), "1"), add(row.TimeOfDayValue(2_000_000), "2"),
			sub(row.TimeOfDayValue(1_000_000), "2"), sub(row.TimeOfDayValue(1_000_000), "1")}},
		{"max time", AggCall{Func: Max, ArgType: row.Type{ID: row.Time}}, []step{
			add(row.TimeOfDayValue(1_000_000), "00:00:01"), add(row.TimeOfDayValue(3_000_000), "00:00:03"), sub(row.TimeOfDayValue(3_000_000), "00:00:01")}},
		{"avg distinct", AggCall{Func: AvgDistinct, ArgType: optest.TDouble}, []step{
			add(f64(1), "1.0"), add(f64(1), "1.0"), add(f64(4), "2.5")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call.Validate(); err != nil {
				t.Fatal(err)
			}
			st := NewStore([]AggCall{tt.call}, false, false)
			id := st.Alloc("")
			res := make([]row.Value, 1)
			for i, s := range tt.steps {
				r := row.Row{s.v}
				if err := st.Check(r); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				st.Update(id, r, s.add)
				st.Results(id, res)
				if got := res[0].String(); got != s.want {
					t.Fatalf("step %d (%v %s): result %s, want %s", i, s.add, s.v, got, s.want)
				}
			}
		})
	}
}

func TestAggCheckArgType(t *testing.T) {
	st := NewStore([]AggCall{{Func: Sum, Arg: 0, ArgType: optest.TDec(10, 2)}}, false, false)
	for _, v := range []row.Value{row.BigIntValue(1), optest.Dec(1, 3)} {
		if err := st.Check(row.Row{v}); err == nil || !strings.Contains(err.Error(), "want DECIMAL(10, 2)") {
			t.Errorf("check(%s) = %v, want a type error", v, err)
		}
	}
	if err := st.Check(row.Row{optest.Dec(1, 2)}); err != nil {
		t.Errorf("check(DECIMAL(10, 2)) = %v", err)
	}
}

// TestExtremesMatchBruteForce drives a retractable MIN and MAX with random
// accumulations and retractions (some before their accumulation) and
// compares them after every step with a scan of the live values.
func TestExtremesMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, isMax := range []bool{false, true} {
		e := newExtremes(isMax, 0)
		// The same through a store, which keeps a single value inline.
		call := AggCall{Func: Min, ArgType: optest.TBigInt}
		if isMax {
			call.Func = Max
		}
		st := NewStore([]AggCall{call}, false, false)
		id := st.Alloc("")
		res := make([]row.Value, 1)
		counts := map[int64]int64{}
		for step := range 20000 {
			v := rng.Int64N(200)
			if step%1000 < 100 {
				v %= 2 // stretches of one or two values: inline, spill
			}
			d := int64(1)
			if rng.IntN(5) < 2 {
				d = -1
			}
			e.add(row.BigIntValue(v), d)
			st.Update(id, row.Row{row.BigIntValue(v)}, d > 0)
			if step%3000 == 2999 {
				st.Release(id) // start again from an empty, inline state
				id = st.Alloc("")
				e = newExtremes(isMax, 0)
				clear(counts)
				continue
			}
			counts[v] += d
			want := "null"
			best := int64(0)
			found := false
			for k, c := range counts {
				if c > 0 && (!found || (isMax && k > best) || (!isMax && k < best)) {
					best, found = k, true
				}
			}
			if found {
				want = row.BigIntValue(best).String()
			}
			if got := e.top().String(); got != want {
				t.Fatalf("max=%v step %d: extreme %s, want %s", isMax, step, got, want)
			}
			if st.Results(id, res); res[0].String() != want {
				t.Fatalf("max=%v step %d: store's extreme %s, want %s", isMax, step, res[0], want)
			}
			if e.heap.Len() > 2*len(e.counts)+64 {
				t.Fatalf("step %d: heap of %d entries for %d values", step, e.heap.Len(), len(e.counts))
			}
		}
	}
}

func TestDecodeKeyRoundTrip(t *testing.T) {
	vals := row.Row{
		row.NullValue, row.BoolValue(true), row.BoolValue(false), row.IntValue(-7), row.BigIntValue(math.MinInt64),
		row.FloatValue(1.25), row.DoubleValue(-3.5), row.DoubleValue(math.Inf(1)), optest.Dec(-12345, 3),
		row.StringValue(""), row.StringValue(strings.Repeat("é", 100)), row.BytesValue([]byte{0, 1, 255}),
		row.DateValue(-1), row.TimestampValue(1586937900000000), row.TimestampLTZValue(-1),
		wdec("-99999999999999999999999999999999999999", 0), wdec("12345678.123456789012", 12),
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	key := string(row.KeyOf(nil, vals, idx))
	got := make(row.Row, len(vals))
	if err := DecodeKey(got, key); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if !row.Equal(got[i], vals[i]) || got[i].Type() != vals[i].Type() {
			t.Errorf("column %d: decoded %s (%s), want %s (%s)", i, got[i], got[i].Type(), vals[i], vals[i].Type())
		}
	}
	for _, bad := range []string{key[:len(key)-1], key + "x", "\x07\x00\x05"} {
		if err := DecodeKey(make(row.Row, len(vals)), bad); err == nil {
			t.Errorf("decodeKey(%q) accepted a malformed key", bad)
		}
	}
}

func FuzzDecodeKey(f *testing.F) {
	f.Add("", 1)
	f.Add(string(row.KeyOf(nil, row.Row{row.StringValue("ab"), row.BigIntValue(3)}, []int{0, 1})), 2)
	f.Add("\x07\x00\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 1)
	f.Fuzz(func(t *testing.T, key string, n int) {
		if n < 0 || n > 64 {
			return
		}
		vals := make(row.Row, n)
		if DecodeKey(vals, key) != nil {
			return
		}
		// A decoded key encodes to a key that decodes to the same values.
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		again := make(row.Row, n)
		if err := DecodeKey(again, string(row.KeyOf(nil, vals, idx))); err != nil {
			t.Fatalf("re-encoded key does not decode: %v", err)
		}
		if !slices.EqualFunc(vals, again, row.Equal) {
			t.Fatalf("decoded %v, then %v", vals, again)
		}
	})
}

// TestAggMergeEqualsOneSlot checks that merging two slots gives what one
// slot fed every row gives, for every function, both MIN/MAX layouts, and
// values that spill the inline extreme and repeat for DISTINCT.
func TestAggMergeEqualsOneSlot(t *testing.T) {
	var aggs []AggCall
	for _, f := range []AggFunc{CountStar, Count, CountDistinct, Sum, SumDistinct, Min, Max, Avg, AvgDistinct} {
		for col, typ := range []row.Type{optest.TInt, optest.TBigInt, optest.TFloat, optest.TDouble, optest.TDec(10, 2), optest.TString} {
			c := AggCall{Func: f, Arg: col, ArgType: typ}
			if f == CountStar {
				c = AggCall{Func: CountStar, Arg: -1}
			}
			if c.Validate() == nil {
				aggs = append(aggs, c)
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	value := func(col int) row.Value {
		n := rng.Int64N(6) - 2
		if rng.IntN(8) == 0 {
			return row.NullValue
		}
		switch col {
		case 0:
			return row.IntValue(int32(n))
		case 1:
			return row.BigIntValue(n)
		case 2:
			return row.FloatValue(float32(n) / 4)
		case 3:
			return row.DoubleValue(float64(n) / 4)
		case 4:
			return optest.Dec(n*25, 2)
		}
		return row.StringValue(string(rune('a' + n + 2)))
	}
	for _, insertOnly := range []bool{true, false} {
		for trial := range 50 {
			st := NewStore(aggs, insertOnly, true)
			a, b, all := st.Alloc("a"), st.Alloc("b"), st.Alloc("all")
			for i := range 1 + trial%7 {
				r := make(row.Row, 6)
				for c := range r {
					r[c] = value(c)
				}
				st.Update(all, r, true)
				st.Update([]int32{a, b}[i%2], r, true)
			}
			st.Merge(a, b)
			got, want := make([]row.Value, len(aggs)), make([]row.Value, len(aggs))
			st.Results(a, got)
			st.Results(all, want)
			for i := range aggs {
				if !row.Equal(got[i], want[i]) {
					t.Fatalf("insertOnly=%v trial %d: %s merged %s, fed once %s", insertOnly, trial, aggs[i], got[i], want[i])
				}
			}
		}
	}
}

// TestExtremesCompact retracts many values below a live maximum: they
// never reach the heap's top, so only compaction can bound the heap.
func TestExtremesCompact(t *testing.T) {
	e := newExtremes(true, 0)
	e.add(row.BigIntValue(1_000_000), 1)
	for v := range int64(10_000) {
		e.add(row.BigIntValue(v), 1)
		e.add(row.BigIntValue(v), -1)
		if e.heap.Len() > 100 || len(e.counts) > 100 {
			t.Fatalf("after %d values: heap %d, counts %d", v, e.heap.Len(), len(e.counts))
		}
	}
	e.add(row.BigIntValue(7), -1) // a retraction before its accumulation is kept
	e.add(row.BigIntValue(1_000_000), -1)
	if got := e.top(); !got.IsNull() {
		t.Fatalf("top %s after every value was retracted", got)
	}
	e.add(row.BigIntValue(7), 2)
	if got := e.top(); got.Int64() != 7 {
		t.Fatalf("top %s, want 7 (count -1 + 2)", got)
	}
}
