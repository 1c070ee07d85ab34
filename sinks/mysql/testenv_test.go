package mysql_test

import (
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// The shared helpers of internal/testenv, under the names this package's
// tests call them by.
var (
	openDB = testenv.MySQL
	table  = testenv.MySQLTable
	exec   = testenv.Exec
)

// runPipeline runs the pipeline file yaml to its end. The DSN comes from
// the environment, as a pipeline file should take it.
func runPipeline(t *testing.T, dsn, yaml string) pipeline.Summary {
	t.Helper()
	t.Setenv("ETLD_MYSQL_TEST_DSN", dsn)
	return pipefile.Run(t, testenv.Context(t, 2*time.Minute), pipeline.Env{Registry: registry()}, "", yaml)
}
