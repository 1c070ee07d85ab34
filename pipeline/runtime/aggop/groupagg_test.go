package aggop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

const (
	I  = row.Insert
	UB = row.UpdateBefore
	UA = row.UpdateAfter
	D  = row.Delete
)

// groupAggCase feeds batches and checks the output after each (and the
// batch-mode output of Finish).
type groupAggCase struct {
	name    string
	keys    []int
	aggs    []AggCall
	opt     GroupAggOptions
	batches [][]row.Change
	want    [][]string // per batch
	finish  []string
	dropped int64
}

func runGroupAggCases(t *testing.T, cases []groupAggCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			g := optest.Must(NewGroupAgg(tt.keys, tt.aggs, tt.opt))
			out := &optest.Out{}
			for i, b := range tt.batches {
				if err := g.Process(optest.Batch(b...), out); err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
				if err := g.Watermark(operator.MaxWatermark, out); err != nil {
					t.Fatalf("batch %d: watermark: %v", i, err)
				}
				if got := out.Take(); !slices.Equal(got, tt.want[i]) {
					t.Fatalf("batch %d:\ngot  %q\nwant %q", i, got, tt.want[i])
				}
			}
			if err := g.Finish(out); err != nil {
				t.Fatalf("finish: %v", err)
			}
			if got := out.Take(); !slices.Equal(got, tt.finish) {
				t.Fatalf("finish:\ngot  %q\nwant %q", got, tt.finish)
			}
			if n, _ := g.Dropped(); n != tt.dropped {
				t.Errorf("dropped %d, want %d", n, tt.dropped)
			}
		})
	}
}

func TestGroupAgg(t *testing.T) {
	countSumMax := []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
		{Func: Max, Arg: 1, ArgType: optest.TBigInt},
	}
	runGroupAggCases(t, []groupAggCase{{
		name: "count sum max per key over inserts",
		keys: []int{0}, aggs: countSumMax,
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "b", 10), optest.Change(I, "a", 5)},
			{optest.Change(I, "a", 2)},
		},
		want: [][]string{
			{"+I[a, 1, 1, 1]", "+I[b, 1, 10, 10]", "-U[a, 1, 1, 1]", "+U[a, 2, 6, 5]"},
			{"-U[a, 2, 6, 5]", "+U[a, 3, 8, 5]"},
		},
	}, {
		name: "updating input: -U/+U pairs and deletes",
		keys: []int{0}, aggs: countSumMax,
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "a", 7)},
			{optest.Change(UB, "a", 7), optest.Change(UA, "a", 3)},
			{optest.Change(D, "a", 1)},
		},
		want: [][]string{
			{"+I[a, 1, 1, 1]", "-U[a, 1, 1, 1]", "+U[a, 2, 8, 7]"},
			// Flink's GroupAggFunction handles the -U and the +U on their own.
			{"-U[a, 2, 8, 7]", "+U[a, 1, 1, 1]", "-U[a, 1, 1, 1]", "+U[a, 2, 4, 3]"},
			{"-U[a, 2, 4, 3]", "+U[a, 1, 3, 3]"},
		},
	}, {
		name: "max and min after the extreme is retracted",
		keys: []int{0},
		aggs: []AggCall{{Func: Max, Arg: 1, ArgType: optest.TBigInt}, {Func: Min, Arg: 1, ArgType: optest.TBigInt}},
		batches: [][]row.Change{
			{optest.Change(I, "k", 5), optest.Change(I, "k", 9), optest.Change(I, "k", 1)},
			{optest.Change(D, "k", 9)},
			{optest.Change(D, "k", 1)},
		},
		want: [][]string{
			{"+I[k, 5, 5]", "-U[k, 5, 5]", "+U[k, 9, 5]", "-U[k, 9, 5]", "+U[k, 9, 1]"},
			{"-U[k, 9, 1]", "+U[k, 5, 1]"},
			{"-U[k, 5, 1]", "+U[k, 5, 5]"},
		},
	}, {
		name: "-D when the group empties, +I when it comes back",
		keys: []int{0}, aggs: countSumMax,
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "a", 2)},
			{optest.Change(D, "a", 1), optest.Change(UB, "a", 2)},
			{optest.Change(UA, "a", 4)},
		},
		want: [][]string{
			{"+I[a, 1, 1, 1]", "-U[a, 1, 1, 1]", "+U[a, 2, 3, 2]"},
			{"-U[a, 2, 3, 2]", "+U[a, 1, 2, 2]", "-D[a, 1, 2, 2]"},
			{"+I[a, 1, 4, 4]"},
		},
	}, {
		name: "an unchanged result emits nothing",
		keys: []int{0},
		aggs: []AggCall{{Func: Max, Arg: 1, ArgType: optest.TBigInt}},
		batches: [][]row.Change{
			{optest.Change(I, "a", 5), optest.Change(I, "a", 3), optest.Change(I, "a", 5), optest.Change(D, "a", 5)},
			{optest.Change(UB, "a", 3), optest.Change(UA, "a", 4)},
		},
		want: [][]string{{"+I[a, 5]"}, nil},
	}, {
		name: "count distinct with retraction",
		keys: []int{0},
		aggs: []AggCall{{Func: CountDistinct, Arg: 1, ArgType: optest.TString}, {Func: Count, Arg: 1, ArgType: optest.TString}},
		batches: [][]row.Change{
			{optest.Change(I, 1, "x"), optest.Change(I, 1, "x"), optest.Change(I, 1, "y"), optest.Change(I, 1, nil)},
			{optest.Change(D, 1, "x"), optest.Change(D, 1, "x")},
		},
		want: [][]string{
			{"+I[1, 1, 1]", "-U[1, 1, 1]", "+U[1, 1, 2]", "-U[1, 1, 2]", "+U[1, 2, 3]"},
			{"-U[1, 2, 3]", "+U[1, 2, 2]", "-U[1, 2, 2]", "+U[1, 1, 1]"},
		},
	}, {
		name: "avg of each type",
		keys: []int{0},
		aggs: []AggCall{
			{Func: Avg, Arg: 1, ArgType: optest.TInt},
			{Func: Avg, Arg: 2, ArgType: optest.TBigInt},
			{Func: Avg, Arg: 3, ArgType: optest.TDouble},
			{Func: Avg, Arg: 4, ArgType: optest.TDec(10, 2)},
		},
		batches: [][]row.Change{
			{optest.Change(I, "a", int32(1), 10, 1.0, optest.Dec(100, 2)), optest.Change(I, "a", int32(2), -3, 2.0, optest.Dec(250, 2))},
			{optest.Change(I, "a", nil, nil, nil, nil)},
		},
		want: [][]string{
			{"+I[a, 1, 10, 1.0, 1.000000]", "-U[a, 1, 10, 1.0, 1.000000]", "+U[a, 1, 3, 1.5, 1.750000]"},
			nil,
		},
	}, {
		name: "retraction of an unknown key is ignored and counted",
		keys: []int{0}, aggs: countSumMax,
		batches: [][]row.Change{{optest.Change(D, "ghost", 1), optest.Change(UB, "ghost", 1), optest.Change(I, "a", 1)}},
		want:    [][]string{{"+I[a, 1, 1, 1]"}},
		dropped: 2,
	}, {
		name: "null arguments",
		keys: []int{0},
		aggs: []AggCall{
			{Func: CountStar, Arg: -1}, {Func: Count, Arg: 1, ArgType: optest.TBigInt},
			{Func: Sum, Arg: 1, ArgType: optest.TBigInt}, {Func: Min, Arg: 1, ArgType: optest.TBigInt},
		},
		batches: [][]row.Change{{optest.Change(I, "a", nil), optest.Change(I, "a", 4)}},
		want:    [][]string{{"+I[a, 1, 0, null, null]", "-U[a, 1, 0, null, null]", "+U[a, 2, 1, 4, 4]"}},
	}, {
		name: "no aggregates: distinct over an updating input",
		keys: []int{0, 1},
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "a", 1), optest.Change(I, "b", 1)},
			{optest.Change(D, "a", 1), optest.Change(D, "a", 1)},
		},
		want: [][]string{{"+I[a, 1]", "+I[b, 1]"}, {"-D[a, 1]"}},
	}, {
		name: "streaming global aggregate: +I, updates, -D when empty",
		aggs: []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 0, ArgType: optest.TBigInt}},
		batches: [][]row.Change{
			{optest.Change(I, 3), optest.Change(I, 4)},
			{optest.Change(D, 3), optest.Change(D, 4)},
			{optest.Change(I, 5)},
		},
		want: [][]string{
			{"+I[1, 3]", "-U[1, 3]", "+U[2, 7]"},
			{"-U[2, 7]", "+U[1, 4]", "-D[1, 4]"},
			{"+I[1, 5]"},
		},
	}, {
		name: "streaming global aggregate over no input emits nothing",
		aggs: []AggCall{{Func: CountStar, Arg: -1}},
	}, {
		name: "batch mode emits only at finish",
		keys: []int{0}, aggs: countSumMax, opt: GroupAggOptions{Batch: true},
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "b", 10), optest.Change(I, "a", 5)},
			{optest.Change(I, "c", 1), optest.Change(D, "c", 1), optest.Change(D, "x", 1), optest.Change(I, "a", 2)},
		},
		want:    [][]string{nil, nil},
		finish:  []string{"+I[a, 3, 8, 5]", "+I[b, 1, 10, 10]"},
		dropped: 1,
	}, {
		name: "batch global aggregate over an empty input",
		aggs: []AggCall{
			{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 0, ArgType: optest.TBigInt},
			{Func: Avg, Arg: 0, ArgType: optest.TDouble}, {Func: Max, Arg: 0, ArgType: optest.TString},
		},
		opt:    GroupAggOptions{Batch: true},
		finish: []string{"+I[0, null, null, null]"},
	}, {
		name: "batch keys of every type come back from the state",
		keys: []int{0, 1, 2, 3}, opt: GroupAggOptions{Batch: true, InsertOnly: true},
		aggs: []AggCall{{Func: CountStar, Arg: -1}},
		batches: [][]row.Change{{
			optest.Change(I, "s", nil, row.TimestampValue(1586937900000000), optest.Dec(-5, 1)),
			optest.Change(I, "s", nil, row.TimestampValue(1586937900000000), optest.Dec(-5, 1)),
			optest.Change(I, "", int32(-1), row.BoolValue(true), row.DateValue(18367)),
		}},
		want:   [][]string{nil},
		finish: []string{"+I[s, null, 2020-04-15T08:05, -0.5, 2]", "+I[, -1, true, 2020-04-15, 1]"},
	}})
}

func TestGroupAggErrors(t *testing.T) {
	tests := []struct {
		name string
		keys []int
		aggs []AggCall
		opt  GroupAggOptions
		in   row.Change
		want string
	}{
		{"invalid call", []int{0}, []AggCall{{Func: Sum, Arg: 1, ArgType: optest.TString}}, GroupAggOptions{},
			optest.Change(I, "a", "b"), "not numeric"},
		{"negative key", []int{-1}, nil, GroupAggOptions{}, optest.Change(I, "a"), "negative"},
		{"short row", []int{0}, []AggCall{{Func: Sum, Arg: 3, ArgType: optest.TBigInt}}, GroupAggOptions{},
			optest.Change(I, "a", 1), "row has 2 columns, want at least 4"},
		{"argument type", []int{0}, []AggCall{{Func: Sum, Arg: 1, ArgType: optest.TBigInt}}, GroupAggOptions{},
			optest.Change(I, "a", int32(1)), "has type INT, want BIGINT"},
		{"retraction into insert-only", []int{0}, []AggCall{{Func: Max, Arg: 1, ArgType: optest.TBigInt}},
			GroupAggOptions{InsertOnly: true}, optest.Change(UB, "a", 1), "insert-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An invalid call fails the constructor, a bad change Process.
			g, err := NewGroupAgg(tt.keys, tt.aggs, tt.opt)
			if err == nil {
				err = g.Process(optest.Batch(tt.in), &optest.Out{})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Process = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// checkGroupAggModel runs ops decoded from data through a streaming and a
// batch GroupAgg (keyed and global) and checks the changelog's shape and
// the final table against a recomputation from the live rows.
func checkGroupAggModel(t *testing.T, data []byte) {
	aggs := []AggCall{
		{Func: CountStar, Arg: -1}, {Func: Count, Arg: 1, ArgType: optest.TBigInt},
		{Func: Sum, Arg: 1, ArgType: optest.TBigInt}, {Func: Min, Arg: 1, ArgType: optest.TBigInt},
		{Func: Max, Arg: 1, ArgType: optest.TBigInt}, {Func: CountDistinct, Arg: 1, ArgType: optest.TBigInt},
		{Func: Avg, Arg: 1, ArgType: optest.TBigInt},
	}
	var in []row.Change
	var live []row.Row
	for i := 0; i+1 < len(data); i += 2 {
		op, b := data[i], data[i+1]
		v := row.BigIntValue(int64(b % 8))
		if b%9 == 8 {
			v = row.NullValue
		}
		switch {
		case op%16 == 15: // a retraction Flink ignores: nothing to retract
			in = append(in, row.Change{Kind: D, Row: row.Row{row.BigIntValue(99), v}})
		case op%2 == 0 || len(live) == 0:
			r := row.Row{row.BigIntValue(int64(op / 2 % 4)), v}
			live = append(live, r)
			in = append(in, row.Change{Kind: []row.Kind{I, UA}[op/8%2], Row: r})
		default:
			j := int(b) % len(live)
			in = append(in, row.Change{Kind: []row.Kind{D, UB}[op/8%2], Row: live[j]})
			live = slices.Delete(live, j, j+1)
		}
	}
	for _, keys := range [][]int{{0}, nil} {
		if keys == nil {
			// For the global aggregate, key 99 is not a missing group.
			in = slices.DeleteFunc(in, func(c row.Change) bool { return c.Row[0].Int64() == 99 })
		}
		want := expectedGroups(keys, live)
		stream := optest.Must(NewGroupAgg(keys, aggs, GroupAggOptions{}))
		table := map[string]string{}
		out := &optest.Out{}
		for start := 0; start < len(in); start += 7 {
			if err := stream.Process(optest.Batch(in[start:min(start+7, len(in))]...), out); err != nil {
				t.Fatal(err)
			}
		}
		lines := out.Take()
		for i, l := range lines {
			kind, body := l[:2], l[2:]
			key := strings.SplitN(strings.Trim(body, "[]"), ",", 2)[0]
			if keys == nil {
				key = ""
			}
			old, ok := table[key]
			switch kind {
			case "+I":
				if ok {
					t.Fatalf("line %d %s: key already has %s", i, l, old)
				}
				table[key] = body
			case "-U", "-D":
				if old != body {
					t.Fatalf("line %d %s: table holds %q", i, l, old)
				}
				delete(table, key)
				if kind == "-U" && (i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "+U")) {
					t.Fatalf("line %d %s: not followed by +U", i, l)
				}
			case "+U":
				if ok || i == 0 || !strings.HasPrefix(lines[i-1], "-U") {
					t.Fatalf("line %d %s: not preceded by -U", i, l)
				}
				table[key] = body
			}
		}
		got := make([]string, 0, len(table))
		for _, v := range table {
			got = append(got, v)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("keys %v: streaming table\n%q\nwant\n%q", keys, got, want)
		}
		if stream.Groups() != len(want) {
			t.Fatalf("keys %v: %d groups in state, want %d", keys, stream.Groups(), len(want))
		}

		batch := optest.Must(NewGroupAgg(keys, aggs, GroupAggOptions{Batch: true}))
		if err := batch.Process(optest.Batch(in...), out); err != nil {
			t.Fatal(err)
		}
		if err := batch.Finish(out); err != nil {
			t.Fatal(err)
		}
		got = out.Take()
		for i, l := range got {
			got[i] = strings.TrimPrefix(l, "+I")
		}
		slices.Sort(got)
		if keys == nil && len(want) == 0 {
			want = []string{"[0, 0, null, null, null, 0, null]"}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("keys %v: batch result\n%q\nwant\n%q", keys, got, want)
		}
	}
}

// expectedGroups computes COUNT(*), COUNT, SUM, MIN, MAX, COUNT(DISTINCT),
// AVG of column 1 per key the slow way, in print form, sorted.
func expectedGroups(keys []int, live []row.Row) []string {
	groups := map[string][]row.Row{}
	for _, r := range live {
		k := ""
		if keys != nil {
			k = r[0].String()
		}
		groups[k] = append(groups[k], r)
	}
	var out []string
	for k, rows := range groups {
		var n, sum int64
		var lo, hi row.Value
		distinct := map[int64]bool{}
		for _, r := range rows {
			if r[1].IsNull() {
				continue
			}
			v := r[1].Int64()
			n, sum, distinct[v] = n+1, sum+v, true
			if lo.IsNull() || v < lo.Int64() {
				lo = r[1]
			}
			if hi.IsNull() || v > hi.Int64() {
				hi = r[1]
			}
		}
		s, avg := "null", "null"
		if n > 0 {
			s, avg = fmt.Sprint(sum), fmt.Sprint(sum/n)
		}
		line := fmt.Sprintf("%d, %d, %s, %s, %s, %d, %s]", len(rows), n, s, lo, hi, len(distinct), avg)
		if keys != nil {
			line = k + ", " + line
		}
		out = append(out, "["+line)
	}
	slices.Sort(out)
	return out
}

func TestGroupAggMatchesRecomputation(t *testing.T) {
	for seed := range 50 {
		data := make([]byte, 400)
		for i := range data {
			data[i] = byte((seed*7919 + i*i*31 + i*seed) % 251)
		}
		checkGroupAggModel(t, data)
	}
}

func FuzzGroupAgg(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 1, 0, 15, 4})
	f.Add([]byte{0, 8, 0, 9, 1, 0, 1, 0, 2, 5, 3, 7})
	f.Add([]byte("a longer stream of bytes to drive several keys and values"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			data = data[:4096] // the model is quadratic; longer streams find nothing new
		}
		checkGroupAggModel(t, data)
	})
}
