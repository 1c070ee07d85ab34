package elasticsearch_test

import (
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// index returns a fresh index name, deleted (with any index starting with
// it) when the test ends.
func (c *cluster) index(prefix string) string {
	return testenv.ElasticsearchIndex(c.t, c.url, prefix)
}

// runPipeline runs the pipeline file yaml, written into dir, through the
// real registry to its end.
func runPipeline(t testing.TB, dir, yaml string) pipeline.Summary {
	t.Helper()
	return pipefile.Run(t, testenv.Context(t, 2*time.Minute), pipeline.Env{Registry: builtin.Registry(), Logger: testLogger(t)}, dir, yaml)
}
