package joinop

import (
	"fmt"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// rightFirst reorders stream as a batch hash join's union passes it on:
// every right change, then every left one, each side in its order.
func rightFirst(stream []sideChange) []sideChange {
	var out []sideChange
	for _, side := range []int{1, 0} {
		for _, s := range stream {
			if s.side == side {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestHashJoinMatchesHeldBatchJoin runs random inputs (NULL keys, a
// residual, retractions on both sides or insert-only left rows) through
// every kind of batch join twice, its right input first: as a hash join
// (JoinSpec.RightFirst: the left rows probed as they come, an
// insert-only left side not stored) and as the batch join that holds
// the left rows to the end. The changes must be the same, in the same
// order, the final table the model's, and the hash join must keep no
// left row when its left side is insert-only.
func TestHashJoinMatchesHeldBatchJoin(t *testing.T) {
	type variant struct {
		kind      JoinKind
		nullAware bool
	}
	variants := []variant{{InnerJoin, false}, {LeftJoin, false}, {RightJoin, false}, {FullJoin, false},
		{SemiJoin, false}, {AntiJoin, false}, {AntiJoin, true}}
	for _, v := range variants {
		for _, insertOnly := range []bool{true, false} {
			for seed := range uint64(6) {
				name := fmt.Sprintf("%s/nullAware=%v/insertOnly=%v/%d", v.kind, v.nullAware, insertOnly, seed)
				t.Run(name, func(t *testing.T) {
					stream := joinStream(seed, 300)
					if insertOnly {
						stream = slices.DeleteFunc(stream, func(s sideChange) bool { return s.side == 0 && !s.c.Kind.IsAdd() })
					}
					if v.nullAware && seed%2 == 0 {
						// NOT IN of a right side without a NULL key
						// passes the left rows of keys it lacks (3);
						// with one, none.
						stream = slices.DeleteFunc(stream, func(s sideChange) bool {
							return s.side == 1 && (s.c.Row[0].IsNull() || s.c.Row[0].Int64() == 3)
						})
					}
					stream = rightFirst(stream)
					spec := joinSpec2(v.kind)
					spec.Batch, spec.NullAware = true, v.nullAware
					if !v.nullAware {
						spec.Residual = func(r row.Row) (bool, error) { return r[1].Int64() <= r[3].Int64(), nil }
					}
					spec.LeftAppendOnly = insertOnly
					held := NewJoin(spec)
					spec.RightFirst = true
					hash := NewJoin(spec)
					var want, got joinCollector
					for _, s := range stream {
						b := &row.Batch{Changes: []row.Change{s.c}}
						if err := held.ProcessInput(s.side, b, &want); err != nil {
							t.Fatal(err)
						}
						if err := hash.ProcessInput(s.side, b, &got); err != nil {
							t.Fatal(err)
						}
					}
					if err := held.Finish(&want); err != nil {
						t.Fatal(err)
					}
					if err := hash.Finish(&got); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.got, want.got) {
						t.Fatalf("the hash join emits other changes than the held batch join:\n got %q\nwant %q", got.got, want.got)
					}
					if len(got.got) == 0 && !(v.nullAware && seed%2 == 1) {
						t.Fatal("no output: the case checks nothing")
					}
					if !v.nullAware {
						if table, model := optest.FoldChanges(t, got.got), modelJoin(v.kind, stream); !slices.Equal(table, model) {
							t.Fatalf("final table differs from the model:\n got %q\nwant %q", table, model)
						}
					}
					if insertOnly && (hash.sides[0].size != 0 || hash.leftNulls.size != 0) {
						t.Errorf("the hash join keeps %d left rows (%d of NULL key), want none", hash.sides[0].size, hash.leftNulls.size)
					}
				})
			}
		}
	}
}
