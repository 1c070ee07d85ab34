package runtime

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// KeyedTwo is a Keyed of a two-input operator (a regular join, an
// interval join): each input's batches are cut by that input's key
// columns, whose encodings match where the operator matches rows (the
// join's keys: it indexes both sides by the same encoded key), so that
// the rows of one key from both inputs meet in one worker. The rest is
// Keyed's: the calls run by every worker at once, their output merged
// by the input change that caused each change, the state cut in key
// groups. Op gives it with the TTL methods when its operator takes a
// state TTL (a regular join; an interval join frees its state by the
// watermark).
type KeyedTwo struct {
	*Keyed
	inKeys [2][]int
	widths [2]int
}

// NewKeyedTwo builds n instances of a two-input operator with build,
// its inputs keyed by the columns left and right. n < 1 means one.
func NewKeyedTwo(left, right []int, n int, build func() (operator.KeyGrouped, error)) (*KeyedTwo, error) {
	if len(left) != len(right) {
		return nil, fmt.Errorf("keyed operator: %d left keys, %d right", len(left), len(right))
	}
	k, err := NewKeyed(left, n, build)
	if err != nil {
		return nil, err
	}
	if _, ok := k.workers[0].op.(operator.TwoInput); !ok {
		return nil, fmt.Errorf("keyed operator: %T takes one input", k.workers[0].op)
	}
	t := &KeyedTwo{Keyed: k, inKeys: [2][]int{left, right}}
	for i, keys := range t.inKeys {
		for _, c := range keys {
			t.widths[i] = max(t.widths[i], c+1)
		}
	}
	return t, nil
}

// Op is k as the node runs it: with the operator's TTL methods when its
// operator takes a TTL (KeyedTwoTTL).
func (k *KeyedTwo) Op() operator.Lifecycle {
	if _, ok := k.workers[0].op.(operator.TTLSetter); ok {
		return &KeyedTwoTTL{k}
	}
	return k
}

// ProcessInput implements operator.TwoInput: each change goes to the
// worker of its key.
func (k *KeyedTwo) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	if len(k.workers) == 1 {
		return k.workers[0].op.(operator.TwoInput).ProcessInput(input, in, out)
	}
	if input < 0 || input > 1 {
		return fmt.Errorf("keyed operator: input %d of 2", input)
	}
	k.keys, k.width = k.inKeys[input], k.widths[input]
	for _, w := range k.workers {
		// The operator may keep its share's changes (a batch join's
		// held rows): a new slice each time.
		w.sub.Changes, w.from = nil, nil
	}
	k.split(in, k.workers, func(w *keyedWorker) *keyedShare { return &w.keyedShare }, false)
	err := k.run(out, func(w *keyedWorker) error {
		k.see(w, input, in)
		if len(w.sub.Changes) == 0 {
			return nil
		}
		return w.op.(operator.TwoInput).ProcessInput(input, &w.sub, &w.out)
	})
	k.reportLate()
	return err
}

// sameInputs is an operator told its two inputs are one node of the
// graph (joinop.IntervalJoin, a self-join).
type sameInputs interface {
	SetSameInputs()
	SameInputs() bool
}

// SetSameInputs tells the operator, run as one worker, that its two
// inputs are one node of the graph (a self-join). Several workers are
// not told: each walks every batch whole, on both inputs, to keep the
// state they share as one instance would (operator.SyncedState).
func (k *KeyedTwo) SetSameInputs() {
	if s, ok := k.workers[0].op.(sameInputs); ok && len(k.workers) == 1 {
		s.SetSameInputs()
	}
}

// SameInputs reports whether SetSameInputs took.
func (k *KeyedTwo) SameInputs() bool {
	s, ok := k.workers[0].op.(sameInputs)
	return ok && len(k.workers) == 1 && s.SameInputs()
}

// KeyedTwoTTL is a KeyedTwo whose operator takes a state TTL: it passes
// the TTL and the sweeps on to every worker, as KeyedTTL does.
type KeyedTwoTTL struct{ *KeyedTwo }

// SetStateTTL implements operator.TTLSetter.
func (k *KeyedTwoTTL) SetStateTTL(c operator.StateTTL) { (&KeyedTTL{k.Keyed}).SetStateTTL(c) }

// SweepEvery implements operator.Sweeper.
func (k *KeyedTwoTTL) SweepEvery() time.Duration { return (&KeyedTTL{k.Keyed}).SweepEvery() }

// Sweep implements operator.Sweeper.
func (k *KeyedTwoTTL) Sweep() { (&KeyedTTL{k.Keyed}).Sweep() }

var (
	_ operator.Carving   = (*KeyedTwo)(nil)
	_ operator.TwoInput  = (*KeyedTwo)(nil)
	_ operator.TTLSetter = (*KeyedTwoTTL)(nil)
	_ operator.Sweeper   = (*KeyedTwoTTL)(nil)
	_ operator.TwoInput  = (*KeyedTwoTTL)(nil)
)
