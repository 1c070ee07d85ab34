package testenv

import (
	"testing"
)

// SchemaRegistry returns the base URL of the test schema registry's
// Confluent API (Apicurio Registry, testenv/registry.sh), or skips/fails t
// when ETLD_TEST_SCHEMA_REGISTRY is unset. Its storage is in memory and
// shared by every test: name subjects with UniqueName.
func SchemaRegistry(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvSchemaRegistry, "the schema registry")
}
