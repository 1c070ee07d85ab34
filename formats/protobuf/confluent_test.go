package protobuf

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/schemaregistry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// TestRegistryRoundTrip: the encoder registers shop.proto's text under
// the subject and frames each message with its id and shop.Order's index
// path; the registry's API holds that text, and the decoder, which knows
// no .proto file, reads the messages back.
func TestRegistryRoundTrip(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	c := codec(t, "id BIGINT NOT NULL", "note STRING", "tags ARRAY<STRING NOT NULL> NOT NULL", "buyer ROW<name STRING NOT NULL, vip BOOLEAN>")
	o := RegistryOptions{URL: base, ProtoFile: shopProto, Message: "shop.Order"}
	e, err := NewRegistryEncoder(o, c.Schema)
	if err != nil {
		t.Fatal(err)
	}
	topic := testenv.UniqueName(t, "proto")
	e.SetTopic(topic, false)
	d, err := NewRegistryDecoder(RegistryOptions{URL: base}, c.Schema)
	if err != nil {
		t.Fatal(err)
	}
	formattest.RoundTrip(t, formattest.Codec{Schema: c.Schema, Decoder: d, Encoder: e},
		formattest.RandomChanges(rand.New(rand.NewPCG(1, 2)), c.Schema, 300, false, randomValue))
	cl, _ := schemaregistry.New(schemaregistry.Config{URL: base})
	s, id, err := cl.Latest(t.Context(), topic+"-value")
	text, _ := os.ReadFile(shopProto)
	if err != nil || id != e.ID() || s.Type != "PROTOBUF" || s.Text != string(text) {
		t.Fatalf("registry: %v, id %d (framed %d), %s", err, id, e.ID(), s.Type)
	}
}

// TestRegistryIndependentWriter: a .proto registered with the registry's
// own API and a message the protobuf library wrote, framed by hand with
// the index path of a nested message ([0, 1]: shop.Order.Line, after the
// map entry type the attrs field declares), read as the values set.
func TestRegistryIndependentWriter(t *testing.T) {
	base := testenv.SchemaRegistry(t)
	text, _ := os.ReadFile(shopProto)
	body, _ := json.Marshal(map[string]string{"schemaType": "PROTOBUF", "schema": string(text)})
	res, err := http.Post(base+"/subjects/"+url.PathEscape(testenv.UniqueName(t, "pind")+"-value")+"/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ ID int }
	json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	if out.ID == 0 {
		t.Fatalf("register: HTTP %d", res.StatusCode)
	}
	md, _ := Options{ProtoFile: shopProto, Message: "shop.Order.Line"}.message()
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("sku"), protoreflect.ValueOfString("x9"))
	m.Set(md.Fields().ByName("count"), protoreflect.ValueOfInt32(-3))
	data, _ := proto.Marshal(m)
	rec := append([]byte{0, byte(out.ID >> 24), byte(out.ID >> 16), byte(out.ID >> 8), byte(out.ID), 4, 0, 2}, data...)
	d, _ := NewRegistryDecoder(RegistryOptions{URL: base}, testenv.Schema(t, "count INT", "sku STRING"))
	b := row.NewBatch(1, 2)
	if err := d.Decode(rec, b); err != nil || b.String() != "+I[-3, x9]\n" {
		t.Fatalf("%v: %s", err, b)
	}
}
