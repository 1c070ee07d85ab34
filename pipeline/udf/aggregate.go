package udf

// AggCall is one step of an aggregate function over accumulators.
type AggCall struct{}
