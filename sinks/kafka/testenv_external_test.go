package kafka_test

import (
	"context"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// The shared helpers of internal/testenv, under the names the pipeline
// tests of this package call them by.
var (
	newTopic = testenv.KafkaTopic
	readAll  = testenv.ReadTopic
)

// runPipeline runs the pipeline file text, written into dir, through the
// real registry to its end.
func runPipeline(t testing.TB, ctx context.Context, dir, text string) pipeline.Summary {
	t.Helper()
	return pipefile.Run(t, ctx, pipeline.Env{Registry: builtin.Registry()}, dir, text)
}
