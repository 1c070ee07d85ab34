package expr

import "testing"

// BenchmarkDecimalArith is DECIMAL(10, 2) arithmetic whose results fit an
// int64 (the path DECIMAL(38) must not slow down), a product past int64
// (the exact path) and a constant's product compared.
func BenchmarkDecimalArith(b *testing.B) {
	b.Run("narrow", func(b *testing.B) { benchExprs(b, "d * 3 + d / 3 - d % 3", "d > 12.5", "CAST(d AS DECIMAL(12, 4))") })
	b.Run("wide", func(b *testing.B) { benchExprs(b, "CAST(d AS DECIMAL(20, 2)) * 100000000000000000") })
	// Nexmark q14's filter: a constant times a BIGINT (decConstMul).
	b.Run("constant", func(b *testing.B) { benchExprs(b, "0.908 * b > 1000000 AND 0.908 * b < 50000000") })
}
