package expr

import (
	"errors"
	"math/rand/v2"
	"sync"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// RAND([seed]) and RAND_INTEGER([seed,] bound) of Flink 2.3. Flink gives
// each call with a constant seed a java.util.Random of its own, made
// with the seed when the operator starts, and draws from it row after
// row: javaRandom reproduces Java's generator, so the sequence is
// Flink's, value for value, when the rows come in Flink's order (a
// projection or filter runs them so: Compiled.Sequential keeps its Calc
// on one goroutine). A seed that is not constant makes a generator
// from each row's seed and draws once from it. Without a seed the
// values are random. A NULL seed or bound gives NULL; a bound at or
// below 0 fails the row, as Java's nextInt fails Flink's job.

func init() {
	register(map[string]*funcDef{
		"RAND":         {min: 0, max: 1, build: buildRand},
		"RAND_INTEGER": {min: 1, max: 2, build: buildRandInteger},
	})
}

// javaRandom is java.util.Random: a 48-bit linear congruential
// generator.
type javaRandom struct{ seed uint64 }

const (
	javaRandMult = 0x5DEECE66D
	javaRandMask = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (uint64(seed) ^ javaRandMult) & javaRandMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandMult + 0xB) & javaRandMask
	return int32(int64(r.seed) >> (48 - bits))
}

// nextDouble is Random.nextDouble: 53 random bits in [0, 1).
func (r *javaRandom) nextDouble() float64 {
	hi := int64(r.next(26))
	lo := int64(r.next(27))
	return float64(hi<<27+lo) * (1.0 / (1 << 53))
}

var errBound = errors.New("bound must be positive (Java's Random.nextInt)")

// nextInt is Random.nextInt(bound), with its rejection of the values
// that would favour the low ones.
func (r *javaRandom) nextInt(bound int32) (int32, error) {
	if bound <= 0 {
		return 0, errBound
	}
	x := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(x)) >> 31), nil
	}
	for u := x; ; u = r.next(31) {
		x = u % bound
		if u-x+m >= 0 { // int32 arithmetic: wraps below 0 as Java's does
			return x, nil
		}
	}
}

// seededRandom is the generator of a call with a constant seed, shared
// by the rows in the order they are evaluated.
type seededRandom struct {
	mu sync.Mutex
	r  *javaRandom
}

// isSeedType: Flink's code takes an INT (or narrower) seed; a BIGINT
// one it refuses (Unsupported call: RAND(BIGINT NOT NULL)).
func isSeedType(t row.Type) bool { return t.ID == row.Null || t.ID == row.Int && t.IntBits() <= 32 }

// buildRand is RAND([seed]): DOUBLE in [0, 1).
func buildRand(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.Double, NotNull: allNotNull(args...)}
	if len(args) == 0 {
		return c.volatile(e, t, func(row.Row) (row.Value, error) { return row.DoubleValue(rand.Float64()), nil }), nil
	}
	if err := check(e, args, "an integer seed", isSeedType); err != nil {
		return nil, err
	}
	return c.randDraw(e, t, args[0], func(r *javaRandom, _ row.Row) (row.Value, error) {
		return row.DoubleValue(r.nextDouble()), nil
	})
}

// buildRandInteger is RAND_INTEGER([seed,] bound): INT in [0, bound).
func buildRandInteger(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.Int, NotNull: allNotNull(args...)}
	b := args[len(args)-1]
	isInt := func(t row.Type) bool { return t.ID == row.Null || (t.ID == row.Int && t.IntBits() <= 32) }
	if err := check(e, args, "an INT bound (Flink's code cannot take a BIGINT)", isInt, len(args)-1); err != nil {
		return nil, err
	}
	bound := b.eval
	if len(args) == 1 {
		return c.volatile(e, t, func(r row.Row) (row.Value, error) {
			v, err := bound(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			n := v.Int64()
			if n <= 0 {
				return row.NullValue, evalErr(exprString(e), errBound)
			}
			return row.IntValue(int32(rand.Int64N(n))), nil
		}), nil
	}
	if err := check(e, args, "an integer seed", isSeedType, 0); err != nil {
		return nil, err
	}
	text := exprString(e)
	return c.randDraw(e, t, args[0], func(rnd *javaRandom, r row.Row) (row.Value, error) {
		v, err := bound(r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		n, err := rnd.nextInt(int32(v.Int64()))
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return row.IntValue(n), nil
	})
}

// randDraw makes the node of a seeded call: draw takes one value from
// the generator. A constant seed's generator is made once and drawn
// from row after row; any other seed's is made for the row.
func (c *compiler) randDraw(e *sql.Call, t row.Type, seed *node, draw func(*javaRandom, row.Row) (row.Value, error)) (*node, error) {
	if seed.konst {
		if seed.val.IsNull() {
			return c.volatile(e, t.Nullable(), constEval(row.NullValue)), nil
		}
		c.sequential(e)
		g := &seededRandom{r: newJavaRandom(seed.val.Int64())}
		return c.volatile(e, t, func(r row.Row) (row.Value, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			return draw(g.r, r)
		}), nil
	}
	ev := seed.eval
	return c.volatile(e, t, func(r row.Row) (row.Value, error) {
		s, err := ev(r)
		if err != nil || s.IsNull() {
			return row.NullValue, err
		}
		return draw(newJavaRandom(s.Int64()), r)
	}), nil
}
