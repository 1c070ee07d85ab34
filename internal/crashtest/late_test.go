package crashtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// Late requests: a request that a killed process had sent reaches the
// server after the next life started. A proxy (testenv.HoldProxy) sits
// between the pipeline's child processes and the service. Once the first
// life has stored a checkpoint, the proxy holds its next write request,
// and the life is killed as soon as one is held; the held request waits
// on its connection, whose server side stays open. The second life
// restores the checkpoint and runs to the end (or, when it must wait for
// the held request, until it has sent a given request); then the proxy
// lets the held request through. The output must equal an uninterrupted
// run's.
// For Kafka the proxy also rewrites the broker's metadata to name itself,
// so that the child's connections to the partitions' leader and the
// transaction coordinator go through it too.

// lateCase is one late-request scenario.
type lateCase struct {
	name string
	// pipeline is a template as a scenario's (.Out, .Vars); .Vars.proxy is
	// the proxy's host:port.
	pipeline string
	// needs returns the service's variables; target is the address the
	// proxy forwards to.
	needs  func(t *testing.T) (vars map[string]string, target string)
	frame  testenv.Framing
	hold   func(req []byte) bool
	wrote  func(req []byte) bool // release once the next life sent this; nil: once it ended
	output func(t *testing.T, e *env, out string) []string
	// refused checks the held request's answers, when the service says
	// it refused the late write.
	refused func(t *testing.T, answers [][]byte)
}

// latePipeline is datagen (paced, seeded: the next life reads the same
// rows again) -> GROUP BY (stats) -> sink, the sinks entry of stats; with
// having, a HAVING drops and brings back groups (the sink deletes and
// writes again).
func latePipeline(having bool, sink string) string {
	cond := ""
	if having {
		cond = "\n      HAVING MOD(COUNT(*), 3) <> 0"
	}
	return `version: 1
name: late-{{.Out}}
sources:
  - name: gen
    type: datagen
    rows: 3000
    rate: 1500
    seed: 7
    schema:
      - k BIGINT
      - v BIGINT
    fields:
      k: { min: 0, max: 39 }
      v: { min: 0, max: 1000 }
transforms:
  - name: stats
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total
      FROM gen
      GROUP BY k` + cond + `
sinks:
` + sink
}

var lateElasticsearch = lateCase{
	name: "elasticsearch",
	pipeline: latePipeline(true, `{{template "elasticsearch sink" args . "name" "out" "from" "stats" "hosts" (print "http://" .Vars.proxy)}}
`),
	needs: func(t *testing.T) (map[string]string, string) {
		url := testenv.ElasticsearchURL(t)
		index := testenv.ElasticsearchIndex(t, url, "late")
		return map[string]string{"es": url, "index": index}, strings.TrimPrefix(url, "http://")
	},
	frame: testenv.HTTPFraming,
	hold:  testenv.HTTPRequestTo("POST", "/_bulk"),
	output: func(t *testing.T, e *env, out string) []string {
		return esSources(t, e.Vars["es"], e.Vars["index"]+"_"+out)
	},
	refused: func(t *testing.T, answers [][]byte) {
		if len(answers) != 1 {
			t.Fatalf("%d answers to the held bulk request", len(answers))
		}
		res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(answers[0])), nil)
		if err != nil {
			t.Fatal(err)
		}
		var body io.Reader = res.Body
		if res.Header.Get("Content-Encoding") == "gzip" {
			if body, err = gzip.NewReader(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		text, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(text, []byte("index_not_found_exception")) {
			t.Errorf("the late bulk request was not refused for its life's missing write alias; the answer: %s", text)
		}
	},
}

// lateMySQL holds a write of the killed life (its transaction's COMMIT
// never comes; without HAVING a batch is one statement, which autocommit
// would commit by itself), or its COMMIT. Either way the transaction
// holds a shared lock on the sink's fence row, which the next life raises
// when it starts: the held request is released once the next life asks
// for its fence, and must have ended (rolled back or committed) before
// the next life writes.
func lateMySQL(name string, having bool, hold func([]byte) bool) lateCase {
	return lateCase{
		name: name,
		pipeline: latePipeline(having, `  - name: out
    from: stats
    type: mysql
    dsn: ${ETLD_CRASH_LATE_DSN}
    table: {{.Vars.table}}_{{.Out}}
    create_table: true
`),
		needs: func(t *testing.T) (map[string]string, string) {
			vars := mysqlVars(t, map[string]string{}, "late")
			cfg, err := driver.ParseDSN(vars["dsn"])
			if err != nil {
				t.Fatal(err)
			}
			return vars, cfg.Addr
		},
		frame: testenv.MySQLFraming,
		hold:  hold,
		wrote: testenv.MySQLQuery("UPDATE etld_fences"),
		output: func(t *testing.T, e *env, out string) []string {
			db, _ := testenv.MySQL(t)
			rows, err := db.Query("SELECT k, n, total FROM " + e.Vars["table"] + "_" + out + " ORDER BY k")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var k, n, total int64
				if err := rows.Scan(&k, &n, &total); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d: n=%d total=%d", k, n, total))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return got
		},
	}
}

// lateKafka writes upserts by key to a topic of two partitions; the
// proxy keeps the child's every connection on it (its metadata answers
// name the proxy). The held produce request reaches the broker once the
// next life ended: without fencing its stale values would be the last of
// their keys.
var lateKafka = lateCase{
	name: "kafka",
	pipeline: latePipeline(true, `  - name: out
    from: stats
    type: kafka
    brokers: {{.Vars.proxy}}
    topic: {{.Vars.topic}}_{{.Out}}
    create_topic: true
    partitions: 2
    format: json
`),
	needs: func(t *testing.T) (map[string]string, string) {
		addr := testenv.Kafka(t)
		topic := testenv.UniqueName(t, "late")
		for _, out := range []string{"ref", "out"} {
			testenv.DeleteTopicAtEnd(t, addr, topic+"_"+out)
		}
		return map[string]string{"kafka": addr, "topic": topic}, addr
	},
	frame: testenv.KafkaFraming,
	hold:  testenv.KafkaProduce,
	output: func(t *testing.T, e *env, out string) []string {
		return upserted(testenv.ReadTopic(t, e.Vars["kafka"], e.Vars["topic"]+"_"+out))
	},
}

var lateCases = []lateCase{
	lateElasticsearch,
	lateKafka,
	lateMySQL("mysql write", false, testenv.MySQLWrite),
	lateMySQL("mysql commit", true, testenv.MySQLCommit),
}

func TestLateRequests(t *testing.T) {
	for _, lc := range lateCases {
		t.Run(lc.name, func(t *testing.T) { runLate(t, lc) })
	}
}

func runLate(t *testing.T, lc lateCase) {
	vars, target := lc.needs(t)
	proxy := testenv.NewHoldProxy(t, target, lc.frame)
	vars["proxy"] = proxy.Addr()
	if dsn, ok := vars["dsn"]; ok {
		cfg, _ := driver.ParseDSN(dsn)
		cfg.Addr = proxy.Addr()
		t.Setenv("ETLD_CRASH_LATE_DSN", cfg.FormatDSN())
	}
	e := &env{Dir: t.TempDir(), Vars: vars, rnd: rand.New(rand.NewPCG(1, 1)), data: map[string]any{}}

	ref := e.render(t, lc.pipeline, "ref")
	p, err := pipeline.Load(ref, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(testenv.Context(t, 2*time.Minute), pipeline.RunOptions{}); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	want := lc.output(t, e, "ref")
	if len(want) == 0 {
		t.Fatal("the reference run wrote nothing")
	}

	// The first life: killed once, after a checkpoint, a write request of
	// it is held.
	state := filepath.Join(e.Dir, "state")
	e.Life = 1
	file := e.render(t, lc.pipeline, "out")
	var held <-chan struct{}
	first := runChildUntil(t, file, state, childInterval, 0, func() bool {
		if held == nil {
			if latestID(state) == 0 {
				return false
			}
			held = proxy.Hold(lc.hold)
		}
		select {
		case <-held:
			return true
		default:
			return false
		}
	})
	if !first.killed {
		t.Fatalf("the first life ended before a request of it was held (err %v)\nstderr:\n%s", first.err, first.stderr)
	}
	restoreFrom := latestID(state)

	// The next life, through the same proxy.
	e.Life = 2
	file = e.render(t, lc.pipeline, "out")
	var answered <-chan struct{}
	var wrote <-chan struct{}
	if lc.wrote != nil {
		wrote = proxy.Seen(lc.wrote)
	}
	next := runChildUntil(t, file, state, childInterval, 0, func() bool {
		if wrote != nil && answered == nil {
			select {
			case <-wrote:
				answered = proxy.Release()
			default:
			}
		}
		return false
	})
	if next.err != nil || next.killed {
		t.Fatalf("the next life: %v (killed %v)\nstderr:\n%s", next.err, next.killed, next.stderr)
	}
	if !strings.Contains(next.stderr, "restored checkpoint") {
		t.Fatalf("the next life restored no checkpoint (the first stored %d)\nstderr:\n%s", restoreFrom, next.stderr)
	}
	if answered == nil {
		if lc.wrote != nil {
			t.Fatal("the next life ended without sending the request the release waits for")
		}
		answered = proxy.Release()
	}
	select {
	case <-answered:
	case <-time.After(time.Minute):
		t.Fatal("the held request was not answered within a minute of its release")
	}
	if lc.refused != nil {
		lc.refused(t, proxy.Answers())
	}
	if got := lc.output(t, e, "out"); !slices.Equal(got, want) {
		t.Errorf("after a late request of the killed life the output has %d rows, the reference %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
	} else {
		t.Logf("%s: %d rows equal to the reference after the late request (restored checkpoint %d)", lc.name, len(got), restoreFrom)
	}
}

// esSources refreshes index and returns its documents as "_id: source",
// the source's keys sorted, in _id order.
func esSources(t *testing.T, url, index string) []string {
	t.Helper()
	if _, err := esCall("POST", url+"/"+index+"/_refresh", ""); err != nil {
		t.Fatalf("refresh %s: %v", index, err)
	}
	body, err := esCall("POST", url+"/"+index+"/_search", `{"size":10000,"query":{"match_all":{}}}`)
	if err != nil {
		t.Fatalf("search %s: %v", index, err)
	}
	var resp struct {
		Hits struct {
			Hits []struct {
				ID     string         `json:"_id"`
				Source map[string]any `json:"_source"`
			}
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range resp.Hits.Hits {
		src, _ := json.Marshal(h.Source) // keys sorted
		out = append(out, h.ID+": "+string(src))
	}
	sort.Strings(out)
	return out
}

// upserted folds an upsert topic into "key: value" lines, the last value
// of each key, none after a tombstone, in key order.
func upserted(msgs []kafka.Message) []string {
	last := map[string]string{}
	for _, m := range msgs {
		if m.Value == nil {
			delete(last, string(m.Key))
		} else {
			last[string(m.Key)] = string(m.Value)
		}
	}
	out := make([]string, 0, len(last))
	for k, v := range last {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}
