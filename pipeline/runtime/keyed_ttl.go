package runtime

import (
	"time"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// KeyedTTL is a Keyed whose operator takes a state TTL (a streaming
// GROUP BY): it passes the TTL and the sweeps on to every worker. A
// Keyed of an operator that takes none (a window aggregate) is no
// operator.TTLSetter, as its operator is not.
type KeyedTTL struct{ *Keyed }

// SetStateTTL implements operator.TTLSetter.
func (k *KeyedTTL) SetStateTTL(c operator.StateTTL) {
	for _, w := range k.workers {
		if s, ok := w.op.(operator.TTLSetter); ok {
			s.SetStateTTL(c)
		}
	}
}

// SweepEvery implements operator.Sweeper.
func (k *KeyedTTL) SweepEvery() time.Duration {
	if s, ok := k.workers[0].op.(operator.Sweeper); ok {
		return s.SweepEvery()
	}
	return 0
}

// Sweep implements operator.Sweeper.
func (k *KeyedTTL) Sweep() {
	_ = k.run(nil, func(w *keyedWorker) error {
		if s, ok := w.op.(operator.Sweeper); ok {
			s.Sweep()
		}
		return nil
	})
}

var (
	_ operator.TTLSetter = (*KeyedTTL)(nil)
	_ operator.Sweeper   = (*KeyedTTL)(nil)
)
