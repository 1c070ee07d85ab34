package connector

import "context"

// WatermarkSink is a sink that wants to know how far event time has come
// (the file sink commits a partition once the watermark passed its
// time). The runtime calls Watermark with each watermark that reaches the
// sink, in microseconds, between Writes.
type WatermarkSink interface {
	Watermark(ctx context.Context, wm int64) error
}

// Finisher is a sink that completes what it holds open once its input
// has ended for good (a bounded input's end, not a stop that a later run
// resumes): the file sink then completes its part files so that the
// final checkpoint publishes them. The runtime calls Finish before the
// final checkpoint's Flush and Snapshot.
type Finisher interface {
	Finish(ctx context.Context) error
}
