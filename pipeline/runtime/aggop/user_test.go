package aggop

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// sumAgg is a user aggregate in Go: the sum of its one BIGINT argument
// (a ROW of it, as the planner passes arguments) in 16 bytes, sum and
// count, retractable; it counts its calls and fails on the value 666.
type sumAgg struct{ updates, results, merges int }

func decodeSum(b []byte) (sum, n int64) {
	if len(b) == 16 {
		sum, n = int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	}
	return sum, n
}

func encodeSum(sum, n int64) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(sum)), uint64(n))
}

func (s *sumAgg) Update(accs [][]byte, group []int, args []row.Value, add []bool) ([][]byte, []row.Value, error) {
	s.updates++
	out := slices.Clone(accs)
	for i, g := range group {
		v, _ := args[i].Item(0)
		if v.Int64() == 666 {
			return nil, nil, errors.New("the number of the beast")
		}
		sum, n := decodeSum(out[g])
		if add[i] {
			sum, n = sum+v.Int64(), n+1
		} else {
			sum, n = sum-v.Int64(), n-1
		}
		out[g] = encodeSum(sum, n)
	}
	res, err := s.result(out)
	return out, res, err
}

func (s *sumAgg) Merge(accs, others [][]byte) ([][]byte, error) {
	s.merges++
	out := make([][]byte, len(accs))
	for i := range accs {
		a, an := decodeSum(accs[i])
		b, bn := decodeSum(others[i])
		out[i] = encodeSum(a+b, an+bn)
	}
	return out, nil
}

func (s *sumAgg) Result(accs [][]byte) ([]row.Value, error) {
	s.results++
	return s.result(accs)
}

func (s *sumAgg) result(accs [][]byte) ([]row.Value, error) {
	out := make([]row.Value, len(accs))
	for i, a := range accs {
		if sum, n := decodeSum(a); n > 0 {
			out[i] = row.BigIntValue(sum)
		}
	}
	return out, nil
}

func userCall(f *sumAgg) AggCall {
	return AggCall{Func: UserDefined, Arg: 1, ArgType: row.RowOf(row.Field{Name: "x", Type: row.Of(row.BigInt)}), User: f, UserName: "mysum", UserType: row.Of(row.BigInt)}
}

// uchange is a change of (key, ROW(x)).
func uchange(k row.Kind, key string, x int64) row.Change {
	return row.Change{Kind: k, Row: row.Row{row.StringValue(key), row.StructValue([]row.Value{row.BigIntValue(x)})}}
}

// TestUserAggStreaming runs a user aggregate beside COUNT(*) over an
// updating input: accumulate, retract, the group deleted at zero rows.
func TestUserAggStreaming(t *testing.T) {
	f := &sumAgg{}
	g := optest.Must(NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}, userCall(f)}, GroupAggOptions{}))
	out := &optest.Out{}
	in := optest.Batch(uchange(I, "a", 5), uchange(I, "a", 7), uchange(I, "b", 1), uchange(UB, "a", 5), uchange(UA, "a", 10), uchange(D, "b", 1))
	if err := g.Process(in, out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a, 1, 5]", "-U[a, 1, 5]", "+U[a, 2, 12]", "+I[b, 1, 1]",
		"-U[a, 2, 12]", "+U[a, 1, 7]", "-U[a, 1, 7]", "+U[a, 2, 17]", "-D[b, 1, 1]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if f.updates != 6 || f.results != 0 {
		t.Errorf("%d update and %d result calls for 6 changes, want 6 and none", f.updates, f.results)
	}
}

// TestUserAggBatched calls the function once per batch in batch mode,
// however many groups and rows the batch holds.
func TestUserAggBatched(t *testing.T) {
	f := &sumAgg{}
	g := optest.Must(NewGroupAgg([]int{0}, []AggCall{userCall(f)}, GroupAggOptions{Batch: true, InsertOnly: true}))
	out := &optest.Out{}
	var in []row.Change
	sums := map[string]int64{}
	for i := range 1000 {
		k, x := string(rune('a'+i%5)), int64(2*i+1)
		in = append(in, uchange(I, k, x))
		sums[k] += x
	}
	if err := g.Process(optest.Batch(in...), out); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	got := out.Take()
	slices.Sort(got)
	var want []string
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		want = append(want, row.Change{Kind: I, Row: row.Row{row.StringValue(k), row.BigIntValue(sums[k])}}.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if f.updates != 1 || f.results != 0 {
		t.Errorf("%d update and %d result calls for one batch, want 1 and none (the update gives the results)", f.updates, f.results)
	}
}

// TestUserAggSnapshotRestore restores a user aggregate's accumulators
// from a snapshot and goes on from them exactly, including a retraction
// of a row accumulated before the snapshot.
func TestUserAggSnapshotRestore(t *testing.T) {
	build := func() *GroupAgg {
		return optest.Must(NewGroupAgg([]int{0}, []AggCall{userCall(&sumAgg{})}, GroupAggOptions{}))
	}
	g := build()
	out := &optest.Out{}
	if err := g.Process(optest.Batch(uchange(I, "a", 5), uchange(I, "a", 7), uchange(I, "b", 3)), out); err != nil {
		t.Fatal(err)
	}
	snap, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	next := optest.Batch(uchange(D, "a", 5), uchange(I, "b", 4))
	if err := g.Process(next, out); err != nil {
		t.Fatal(err)
	}
	want := out.Take()[4:]
	r := build()
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if err := r.Process(next, out); err != nil {
		t.Fatal(err)
	}
	if got := out.Take(); !slices.Equal(got, want) || len(got) != 4 {
		t.Errorf("restored run: %v, uninterrupted: %v", got, want)
	}
}

// TestUserAggFailure fails the operator on the change the function
// fails on, naming the function.
func TestUserAggFailure(t *testing.T) {
	g := optest.Must(NewGroupAgg([]int{0}, []AggCall{userCall(&sumAgg{})}, GroupAggOptions{}))
	err := g.Process(optest.Batch(uchange(I, "a", 5), uchange(I, "a", 666), uchange(I, "a", 1)), &optest.Out{})
	if err == nil || !strings.Contains(err.Error(), "mysum($1): the number of the beast") {
		t.Fatalf("error %v", err)
	}
}

// TestUserAggWindowMerge merges a user aggregate's slices in a HOP
// window.
func TestUserAggWindowMergeStore(t *testing.T) {
	f := &sumAgg{}
	s := NewStore([]AggCall{userCall(f)}, true, true)
	a, b := s.Alloc("k"), s.Alloc("k")
	s.Update(a, uchange(I, "k", 2).Row, true)
	s.Update(b, uchange(I, "k", 3).Row, true)
	s.Merge(a, b)
	res := make([]row.Value, 1)
	s.Results(a, res)
	if res[0].Int64() != 5 || f.merges != 1 || s.Err() != nil {
		t.Errorf("merged %v (%d merges, %v)", res[0], f.merges, s.Err())
	}
}
