package elasticsearch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	es "github.com/etld/etld/sinks/elasticsearch"
)

// TestConformance runs the connector kit on the Elasticsearch sink in
// upsert mode, one document per key, without interval flushes: rows
// stay buffered until Flush.
func TestConformance(t *testing.T) {
	c := newCluster(t)
	var off time.Duration
	conntest.RunSink(t, conntest.Sink{
		Mode:   connector.Upsert,
		Server: strings.TrimPrefix(c.url, "http://"),
		Target: func(t *testing.T) conntest.Target {
			index := c.index("conntest")
			return conntest.Target{
				Sink: func(t *testing.T, via string) connector.Sink {
					s, err := es.New(es.Config{Hosts: []string{"http://" + via}, Index: index, BulkFlushInterval: &off},
						connector.SinkEnv{Name: "es", Formats: builtin.Registry(), Logger: testLogger(t)})
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				Landed: func(t *testing.T) []row.Row { return docRows(t, c, index) },
			}
		},
	})
}

// docRows reads the documents {"id":..,"v":..} of conntest.Schema in
// index back into rows.
func docRows(t *testing.T, c *cluster, index string) []row.Row {
	t.Helper()
	var rows []row.Row
	for id, doc := range c.docs(index) {
		n, ok := doc["id"].(float64)
		v, ok2 := doc["v"].(string)
		if !ok || !ok2 {
			t.Fatalf("document %s is %v: want id and v", id, doc)
		}
		rows = append(rows, conntest.Row(int64(n), v))
	}
	return rows
}
