package row

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The in-buffer decode of common values (quickValue) reads what the
// general path reads, value for value, error for error: random rows of
// NULLs, integers, times and strings, encoded whole, cut short or with
// a byte damaged, decoded from a buffer (quick) and from a stream (the
// general path, whose buffer refills).
func TestQuickValueSameAsGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for range 3000 {
		var enc []byte
		for range 1 + rng.IntN(6) {
			var v Value
			switch rng.IntN(5) {
			case 0:
				v = NullValue
			case 1:
				v = BigIntValue(rng.Int64() >> rng.IntN(64))
			case 2:
				v = TimestampValue(-rng.Int64N(1 << 50))
			case 3:
				v = StringValue(string(make([]byte, rng.IntN(200))))
			default:
				v = DoubleValue(rng.Float64())
			}
			enc = AppendValue(enc, v)
		}
		switch rng.IntN(4) {
		case 0:
			enc = enc[:rng.IntN(len(enc)+1)]
		case 1:
			enc[rng.IntN(len(enc))] = byte(rng.IntN(256))
		}
		quick, general := NewDecoder(enc), NewStreamDecoder(bytes.NewReader(enc), int64(len(enc)))
		for quick.Len() > 0 && quick.Err() == nil {
			q, g := quick.Value(), general.Value()
			if Compare(q, g) != 0 || q.Type() != g.Type() || (quick.Err() == nil) != (general.Err() == nil) {
				t.Fatalf("%x: quick %v (%v), general %v (%v)", enc, q, quick.Err(), g, general.Err())
			}
		}
	}
}
