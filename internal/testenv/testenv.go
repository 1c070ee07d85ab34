// Package testenv hands integration tests the addresses of the real services
// (MariaDB, PostgreSQL, Kafka, Elasticsearch) and the paths of the programs (Chromium, dot,
// podman, umoci) that the scripts in the repository's
// testenv/ directory start on loopback.
//
// The addresses come from environment variables, which `make test` sets after
// running testenv/up.sh:
//
//	ETLD_TEST_MYSQL_DSN  go-sql-driver DSN, e.g. etld:pw@tcp(127.0.0.1:3306)/etld_test
//	ETLD_TEST_PG_DSN     PostgreSQL URL, e.g. postgres://etld:pw@127.0.0.1:5432/etld_test?sslmode=disable
//	ETLD_TEST_PG_BIN     PostgreSQL's programs, e.g. /usr/lib/postgresql/15/bin (a private server)
//	ETLD_TEST_KAFKA      bootstrap address, e.g. 127.0.0.1:9092
//	ETLD_TEST_KAFKA_SASL the same broker's SASL_PLAINTEXT listener, e.g. 127.0.0.1:9094
//	ETLD_TEST_ES_URL     base URL, e.g. http://127.0.0.1:9200
//	ETLD_TEST_CHROMIUM   headless browser, e.g. /usr/bin/chromium
//	ETLD_TEST_DOT        Graphviz's dot, e.g. /usr/bin/dot
//	ETLD_TEST_PODMAN     podman, e.g. /usr/bin/podman (builds only; podman run fails here)
//	ETLD_TEST_UMOCI      umoci, e.g. /usr/bin/umoci
//	ETLD_TEST_PYTHON     a Python with duckdb and pyarrow (testenv/tools.sh)
//	ETLD_TEST_ASC        AssemblyScript's compiler, asc (testenv/tools.sh)
//	ETLD_TEST_FLINK      runner of Flink SQL scripts in local mode (testenv/flink.sh)
//	ETLD_TEST_SCHEMA_REGISTRY Confluent Schema Registry API, e.g. http://127.0.0.1:8081/apis/ccompat/v7
//	ETLD_TEST_S3_ENDPOINT an S3 server, e.g. http://127.0.0.1:7070, with
//	                     ETLD_TEST_S3_ACCESS_KEY, _SECRET_KEY and _REGION (testenv/s3.sh)
//
// When a variable is unset the test is skipped with a message saying so,
// except when CI=true or ETLD_TEST_REQUIRE=1: then it fails, so an
// integration test never passes silently in CI.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Names of the environment variables read by this package.
const (
	EnvMySQLDSN = "ETLD_TEST_MYSQL_DSN"
	// EnvPostgresDSN is the shared PostgreSQL's URL; EnvPostgresBin the
	// directory of its programs, for a private server.
	EnvPostgresDSN = "ETLD_TEST_PG_DSN"
	EnvPostgresBin = "ETLD_TEST_PG_BIN"
	EnvKafka       = "ETLD_TEST_KAFKA"
	EnvKafkaSASL   = "ETLD_TEST_KAFKA_SASL"
	// EnvKafkaSASLUser and EnvKafkaSASLPassword override the credentials
	// testenv/kafka.sh creates (DefaultKafkaSASLUser, -Password), for a
	// broker set up elsewhere.
	EnvKafkaSASLUser     = "ETLD_TEST_KAFKA_SASL_USER"
	EnvKafkaSASLPassword = "ETLD_TEST_KAFKA_SASL_PASSWORD"
	EnvElasticsearchURL  = "ETLD_TEST_ES_URL"
	// The programs testenv/tools.sh installs from Debian's packages.
	EnvChromium = "ETLD_TEST_CHROMIUM"
	EnvDot      = "ETLD_TEST_DOT"
	EnvPodman   = "ETLD_TEST_PODMAN"
	EnvUmoci    = "ETLD_TEST_UMOCI"
	// EnvPython is the Python of the environment tools.sh fills from
	// PyPI with DuckDB and pyarrow.
	EnvPython = "ETLD_TEST_PYTHON"
	// EnvASC is AssemblyScript's compiler, asc (testenv/tools.sh).
	EnvASC = "ETLD_TEST_ASC"
	// EnvFlink is the runner testenv/flink.sh builds (see RunFlink).
	EnvFlink = "ETLD_TEST_FLINK"
	// EnvFlinkCluster is the REST address of the Flink session cluster
	// testenv/flinkcluster.sh starts (see FlinkCluster).
	EnvFlinkCluster = "ETLD_TEST_FLINK_CLUSTER"
	// EnvSchemaRegistry is the base URL of the Confluent Schema Registry
	// API of the registry testenv/registry.sh starts.
	EnvSchemaRegistry = "ETLD_TEST_SCHEMA_REGISTRY"
	// EnvRequire set to 1 turns a missing service into a failure, as CI=true does.
	EnvRequire = "ETLD_TEST_REQUIRE"
)

// MySQLDSN returns the go-sql-driver DSN of the test MariaDB (database
// etld_test, a user allowed to create tables), or skips/fails t when unset.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvMySQLDSN, "MariaDB")
}

// Chromium returns the path of a headless-capable Chromium, or skips/fails t
// when ETLD_TEST_CHROMIUM is unset.
func Chromium(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvChromium, "Chromium")
}

// Dot returns the path of Graphviz's dot, or skips/fails t when
// ETLD_TEST_DOT is unset.
func Dot(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvDot, "Graphviz dot")
}

// Podman returns the path of podman (build and save work here; run does
// not), or skips/fails t when ETLD_TEST_PODMAN is unset.
func Podman(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvPodman, "podman")
}

// Umoci returns the path of umoci, or skips/fails t when ETLD_TEST_UMOCI is
// unset.
func Umoci(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvUmoci, "umoci")
}

// Python returns the path of a Python that imports duckdb, pyarrow and
// fastavro (testenv/tools.sh),
// or skips/fails t when ETLD_TEST_PYTHON is unset.
func Python(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvPython, "Python with DuckDB and pyarrow")
}

// ASC returns the path of AssemblyScript's compiler, or skips/fails t
// when ETLD_TEST_ASC is unset.
func ASC(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvASC, "AssemblyScript's asc")
}

// Kafka returns the bootstrap address (host:port) of the test Kafka broker,
// or skips/fails t when unset. The broker auto-creates topics, but tests
// should create the topics they need.
func Kafka(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvKafka, "Kafka broker")
}

// The user testenv/kafka.sh sets up on the SASL listener, for PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512 alike (testenv/lib.sh).
const (
	DefaultKafkaSASLUser     = "etld"
	DefaultKafkaSASLPassword = "etld-test-pw"
)

// KafkaSASL returns the address (host:port) of the test broker's
// SASL_PLAINTEXT listener and a user and password it accepts with PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512, or skips/fails t when
// ETLD_TEST_KAFKA_SASL is unset. It is the broker of Kafka(t): topics
// created through one listener are seen through the other.
func KafkaSASL(t testing.TB) (addr, user, password string) {
	t.Helper()
	addr = lookup(t, EnvKafkaSASL, "Kafka broker with a SASL_PLAINTEXT listener")
	user, password = DefaultKafkaSASLUser, DefaultKafkaSASLPassword
	if v := strings.TrimSpace(os.Getenv(EnvKafkaSASLUser)); v != "" {
		user = v
	}
	if v := os.Getenv(EnvKafkaSASLPassword); v != "" {
		password = v
	}
	return addr, user, password
}

// ElasticsearchURL returns the base URL of the test Elasticsearch node, or
// skips/fails t when unset.
func ElasticsearchURL(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvElasticsearchURL, "Elasticsearch")
}

// Required reports whether a missing service must fail the test rather than
// skip it: CI is true, or ETLD_TEST_REQUIRE is 1.
func Required() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci || os.Getenv(EnvRequire) == "1"
}

func lookup(t testing.TB, name, service string) string {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	if Required() {
		t.Fatalf("%s is not set, and this integration test needs a real %s (CI=true or %s=1, so it fails instead of skipping); run `make test`, or `testenv/up.sh` and then `source testenv/.env`", name, service, EnvRequire)
	}
	t.Skipf("SKIP: %s is not set; this integration test needs a real %s: run `make test`, or `testenv/up.sh` and then `source testenv/.env`", name, service)
	return ""
}

var nameSeq atomic.Uint64

// runID is random per test binary run, so names from two runs against the
// same long-lived services never collide.
var runID = func() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano()%(1<<32), 16)
	}
	return hex.EncodeToString(b[:])
}()

// maxNameLen fits MySQL identifiers (64); Kafka topics (249) and
// Elasticsearch indices (255 bytes) allow more.
const maxNameLen = 64

// UniqueName returns a name that is unique per call and per test run and is
// valid as a Kafka topic, a MySQL table or database and an Elasticsearch
// index: lower-case letters, digits and underscores, starting with a letter,
// at most 64 characters. It looks like prefix_testname_1a2b3c4d_7.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	suffix := "_" + runID + "_" + strconv.FormatUint(nameSeq.Add(1), 10)
	head := sanitize(prefix)
	if head == "" || head[0] < 'a' || head[0] > 'z' {
		head = "t" + head
	}
	if test := sanitize(t.Name()); test != "" {
		head += "_" + test
	}
	if room := maxNameLen - len(suffix); len(head) > room {
		head = strings.TrimRight(head[:room], "_")
	}
	return head + suffix
}

// sanitize lower-cases s and replaces every run of characters outside
// [a-z0-9] with one underscore, trimming underscores at both ends.
func sanitize(s string) string {
	var b strings.Builder
	underscore := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			underscore = false
			continue
		}
		if !underscore && b.Len() > 0 {
			b.WriteByte('_')
			underscore = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// Context returns a context that is cancelled after d or when the test ends,
// whichever comes first. Use it to bound every call to a real service.
func Context(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Eventually calls cond until it returns nil, polling every 50ms, and fails
// t with cond's last error once timeout has passed. Use it instead of sleeps
// to wait for a service to reach a state.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
