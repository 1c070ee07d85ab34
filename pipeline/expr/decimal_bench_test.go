package expr

import "testing"

// BenchmarkDecimalArith is DECIMAL(10, 2) arithmetic whose results fit an
// int64 (the path DECIMAL(38) must not slow down) and a product past
// int64 (the exact path).
func BenchmarkDecimalArith(b *testing.B) {
	b.Run("narrow", func(b *testing.B) { benchExprs(b, "d * 3 + d / 3 - d % 3", "d > 12.5", "CAST(d AS DECIMAL(12, 4))") })
	b.Run("wide", func(b *testing.B) { benchExprs(b, "CAST(d AS DECIMAL(20, 2)) * 100000000000000000") })
}
