package avro

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/schemaregistry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// registerRaw registers an Avro schema under subject with the registry's
// own API (a plain HTTP request, not the client under test) and returns
// its id.
func registerRaw(t *testing.T, base, subject, schema string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	res, err := http.Post(base+"/subjects/"+url.PathEscape(subject)+"/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		ID int `json:"id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 || out.ID == 0 {
		t.Fatalf("register: HTTP %d, %v, id %d", res.StatusCode, err, out.ID)
	}
	return out.ID
}

// frame is Confluent's wire format of a datum.
func frame(id int, datum []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(id))
	return append(out, datum...)
}

// TestRegistryRoundTrip: the encoder registers the derived schema under
// <topic>-value; the registry's API then holds that schema under the id
// every record is framed with, and the decoder reads the records back.
func TestRegistryRoundTrip(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "m DECIMAL(18,4)", "s STRING", "t TIMESTAMP_LTZ(6)", "a ARRAY<STRING>", "r ROW<x INT>")
	enc, err := NewRegistryEncoder(RegistryOptions{URL: base}, schema, false)
	if err != nil {
		t.Fatal(err)
	}
	topic := testenv.UniqueName(t, "avro")
	enc.SetTopic(topic, false)
	dec, err := NewRegistryDecoder(RegistryOptions{URL: base}, schema, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	formattest.RoundTrip(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc},
		formattest.RandomChanges(rng, schema, 500, false, randomValue))

	c, _ := schemaregistry.New(schemaregistry.Config{URL: base})
	got, id, err := c.Latest(t.Context(), topic+"-value")
	if err != nil {
		t.Fatal(err)
	}
	derived, _ := DeriveSchema(schema)
	if id != enc.ID() || got.Text != derived {
		t.Fatalf("the registry holds id %d, %s; the encoder framed id %d, %s", id, got.Text, enc.ID(), derived)
	}
}

// TestRegistryIndependentWriter: records an independent writer made
// (the schema registered with the registry's own API, the datum by
// hamba/avro's encoder) read as the values written; a second writer
// schema in the same topic (a field added, one dropped, int widened) is
// resolved against the table; a third that cannot be (a string for a
// BIGINT) fails its records with an error naming the schema id.
func TestRegistryIndependentWriter(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	subject := testenv.UniqueName(t, "indep") + "-value"
	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"note","type":"string"}]}`
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"qty","type":["null","int"],"default":null}]}`
	bad := `{"type":"record","name":"Other","fields":[{"name":"id","type":"string"}]}`
	id1, id2 := registerRaw(t, base, subject, v1), registerRaw(t, base, subject, v2)
	idBad := registerRaw(t, base, testenv.UniqueName(t, "other")+"-value", bad)
	d1, _ := avro.Marshal(avro.MustParse(v1), map[string]any{"id": 7, "note": "first"})
	d2, _ := avro.Marshal(avro.MustParse(v2), map[string]any{"id": int64(1) << 40, "qty": 3})
	dBad, _ := avro.Marshal(avro.MustParse(bad), map[string]any{"id": "x"})

	schema := testenv.Schema(t, "id BIGINT", "note STRING", "qty INT")
	dec, err := NewRegistryDecoder(RegistryOptions{URL: base}, schema, false)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(2, 3)
	for _, rec := range [][]byte{frame(id1, d1), frame(id2, d2)} {
		if err := dec.Decode(rec, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "+I[7, first, null]\n+I[1099511627776, null, 3]\n" {
		t.Fatalf("got\n%s", got)
	}
	err = dec.Decode(frame(idBad, dBad), b)
	var de *connector.DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "schema id") || !strings.Contains(err.Error(), "column id: the writer's string cannot be read as BIGINT") {
		t.Fatalf("an unresolvable writer schema: %v", err)
	}
	if err := dec.Decode([]byte("\x01abcd"), b); err == nil || !strings.Contains(err.Error(), "not the zero byte") {
		t.Fatalf("a record without the framing: %v", err)
	}
}

// TestRegistryOutage: while the registry cannot be reached a record's
// schema lookup is retried with backoff and then fails with an
// UnavailableError (not a bad record); once it is back the same record
// decodes, and a registry that comes back during the retries is used at
// once.
func TestRegistryOutage(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	u, _ := url.Parse(base)
	proxy := testenv.NewProxy(t, u.Host)
	via := "http://" + proxy.Addr() + u.Path
	v1 := `{"type":"record","name":"r","fields":[{"name":"id","type":"long"}]}`
	id := registerRaw(t, base, testenv.UniqueName(t, "outage")+"-value", v1)
	datum, _ := avro.Marshal(avro.MustParse(v1), map[string]any{"id": int64(5)})
	rec := frame(id, datum)
	schema := testenv.Schema(t, "id BIGINT")

	dec, err := NewRegistryDecoder(RegistryOptions{URL: via, Timeout: time.Second}, schema, false)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(1, 1)
	err = dec.Decode(rec, b)
	var ue *connector.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, schemaregistry.ErrUnavailable) || b.Len() != 0 {
		t.Fatalf("registry down: %v", err)
	}
	if proxy.Refused() < 2 {
		t.Fatalf("%d connections in a second: no retry", proxy.Refused())
	}
	t.Log(err)

	// Back during the retries: the lookup succeeds.
	dec, _ = NewRegistryDecoder(RegistryOptions{URL: via, Timeout: time.Minute}, schema, false)
	done := make(chan error, 1)
	go func() { done <- dec.Decode(rec, b) }()
	proxy.WaitRefused(t, proxy.Refused()+2)
	proxy.Up()
	if err := <-done; err != nil || b.String() != "+I[5]\n" {
		t.Fatalf("after the registry came back: %v, %s", err, b)
	}
	// Cached: no request when the registry is away again.
	proxy.Down()
	if err := dec.Decode(rec, b); err != nil {
		t.Fatalf("a cached schema id: %v", err)
	}
}

// TestRegistryCheckOnly: with auto_register false the writer only looks
// its schema up, and a subject that lacks it fails the run (an
// UnavailableError), never a record.
func TestRegistryCheckOnly(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	schema := testenv.Schema(t, "id BIGINT")
	no := false
	enc, _ := NewRegistryEncoder(RegistryOptions{URL: base, Subject: testenv.UniqueName(t, "check"), AutoRegister: &no}, schema, false)
	_, err := enc.Encode(nil, row.Insert, row.Row{row.BigIntValue(1)})
	var ue *connector.UnavailableError
	var se *schemaregistry.StatusError
	if !errors.As(err, &ue) || !errors.As(err, &se) || se.Status != http.StatusNotFound {
		t.Fatalf("a subject without the schema: %v", err)
	}
	derived, _ := DeriveSchema(schema)
	id := registerRaw(t, base, enc.Subject(), derived)
	out, err := enc.Encode(nil, row.Insert, row.Row{row.BigIntValue(1)})
	if err != nil || !bytes.Equal(out[:5], frame(id, nil)) {
		t.Fatalf("after registering it: %v, % x (id %d)", err, out, id)
	}
}

// TestDebeziumAvro: events Debezium's Avro converter writes (its envelope
// with source and ts_ms, the row a named record referred to again in
// after) read as changelog rows; what the encoder writes reads back as
// the same kinds.
func TestDebeziumAvro(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	env := `{"type":"record","name":"Envelope","namespace":"db.inv.orders","fields":[
		{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"id","type":"int"},{"name":"qty","type":["null","int"],"default":null}]}],"default":null},
		{"name":"after","type":["null","Value"],"default":null},
		{"name":"source","type":{"type":"record","name":"Source","fields":[{"name":"db","type":"string"}]}},
		{"name":"op","type":"string"},
		{"name":"ts_ms","type":["null","long"],"default":null}]}`
	id := registerRaw(t, base, testenv.UniqueName(t, "dbz")+"-value", env)
	w := avro.MustParse(env)
	// hamba takes a map in a union as {branch: value}.
	img := func(id, qty int) map[string]any {
		return map[string]any{"db.inv.orders.Value": map[string]any{"id": id, "qty": map[string]any{"int": qty}}}
	}
	var recs [][]byte
	for _, ev := range []map[string]any{
		{"before": nil, "after": img(1, 5), "op": "r"},
		{"before": img(1, 5), "after": img(1, 6), "op": "u"},
		{"before": img(1, 6), "after": nil, "op": "d"},
	} {
		ev["source"], ev["ts_ms"] = map[string]any{"db": "inv"}, int64(1700000000000)
		d, err := avro.Marshal(w, ev)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, frame(id, d))
	}
	recs = append(recs, nil) // a tombstone
	schema := testenv.Schema(t, "id INT", "qty INT")
	dec, err := NewRegistryDecoder(RegistryOptions{URL: base}, schema, true)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(4, 2)
	for _, rec := range recs {
		if err := dec.Decode(rec, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "+I[1, 5]\n-U[1, 5]\n+U[1, 6]\n-D[1, 6]\n" {
		t.Fatalf("got\n%s", got)
	}
	enc, err := NewRegistryEncoder(RegistryOptions{URL: base, Subject: testenv.UniqueName(t, "dbzout")}, schema, true)
	if err != nil {
		t.Fatal(err)
	}
	formattest.RoundTrip(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc},
		formattest.RandomChanges(rand.New(rand.NewPCG(7, 8)), schema, 200, true, nil))
}
