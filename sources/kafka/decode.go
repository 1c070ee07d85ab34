package kafka

import (
	"fmt"
	"slices"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// rowBuilder turns one message into changes of the source's full schema:
// the value format's columns, the key format's columns and the metadata
// columns, each at its place in the schema.
type rowBuilder struct {
	width int
	value connector.Decoder
	// valueCols are the full-row positions of the value format's columns.
	// direct is set when they are the first columns in order: the value
	// decoder then writes straight into the output rows.
	valueCols []int
	direct    bool
	scratch   *row.Batch

	key        connector.Decoder // nil when no column comes from the key
	keyCols    []int
	keyScratch *row.Batch

	meta     []metaCol
	metaVals []row.Value // one message's metadata values, reused
}

type metaCol struct {
	pos int
	key string
}

func newRowBuilder(cfg Config, env connector.SourceEnv) (*rowBuilder, error) {
	schema := env.Schema
	rb := &rowBuilder{width: schema.Len()}
	isMeta := func(i int) bool { return env.Metadata != nil && env.Metadata[i] != "" }
	for i := range schema.Fields {
		if isMeta(i) {
			rb.meta = append(rb.meta, metaCol{pos: i, key: env.Metadata[i]})
		}
	}
	rb.metaVals = make([]row.Value, len(rb.meta))

	keyFields := splitList(cfg.KeyFields)
	exceptKey := false
	switch v := strings.ToLower(strings.TrimSpace(cfg.ValueFieldsInclude)); v {
	case "", "all":
	case "except_key", "except-key":
		exceptKey = true
		if len(keyFields) == 0 {
			return nil, connector.Errorf("value_fields_include", "except_key needs key_fields")
		}
	default:
		return nil, connector.UnknownValue("value_fields_include", "value_fields_include", cfg.ValueFieldsInclude, "all", "except_key")
	}
	switch {
	case len(keyFields) > 0 && cfg.KeyFormat.IsZero():
		return nil, connector.Errorf("key_fields", "key_fields needs key_format to decode the key with")
	case len(keyFields) == 0 && !cfg.KeyFormat.IsZero():
		return nil, connector.Errorf("key_format", "key_format needs key_fields: the columns the key holds")
	}
	var keyFieldsSchema []row.Field
	for _, name := range keyFields {
		i := schema.Index(name)
		switch {
		case i < 0:
			return nil, connector.Errorf("key_fields", "column %q is not in the schema", name)
		case isMeta(i):
			return nil, connector.Errorf("key_fields", "column %q is a metadata column", name)
		case slices.Contains(rb.keyCols, i):
			return nil, connector.Errorf("key_fields", "column %q is listed twice", name)
		}
		rb.keyCols = append(rb.keyCols, i)
		keyFieldsSchema = append(keyFieldsSchema, schema.Fields[i])
	}
	if len(keyFields) > 0 {
		if env.Formats.Changelog(cfg.KeyFormat) {
			// A key is one row's identity; the value says what happened
			// to the row. A key that carried row kinds would contradict
			// the value's.
			return nil, connector.Errorf("key_format", "%s is a changelog format, which a message key cannot be: the key only identifies the row; use json, csv or raw for the key and the changelog format for the value (format)", cfg.KeyFormat.Type)
		}
		dec, err := env.Formats.NewDecoder(cfg.KeyFormat, row.NewSchema(keyFieldsSchema...))
		if err != nil {
			return nil, err
		}
		// With value_fields_include: all the value holds the key columns
		// too and its values are the ones Flink keeps, so the key is
		// decoded only to check the format here.
		if exceptKey {
			rb.key = dec
			rb.keyScratch = row.NewBatch(2, len(rb.keyCols))
		}
	}

	var valueFields []row.Field
	for i, f := range schema.Fields {
		if isMeta(i) || (exceptKey && slices.Contains(rb.keyCols, i)) {
			continue
		}
		rb.valueCols = append(rb.valueCols, i)
		valueFields = append(valueFields, f)
	}
	dec, err := env.Formats.NewDecoder(cfg.Format, row.NewSchema(valueFields...))
	if err != nil {
		return nil, err
	}
	rb.value = dec
	rb.direct = true
	for j, i := range rb.valueCols {
		if i != j {
			rb.direct = false
		}
	}
	if !rb.direct {
		rb.scratch = row.NewBatch(2, len(rb.valueCols))
	}
	return rb, nil
}

// build appends the changes m carries to b. On error it appends nothing.
func (rb *rowBuilder) build(m *kafka.Message, b *row.Batch) error {
	before := b.Len()
	if rb.direct {
		if err := rb.value.Decode(m.Value, b); err != nil {
			b.Changes = b.Changes[:before]
			return err
		}
	} else {
		rb.scratch.Changes = rb.scratch.Changes[:0]
		if err := rb.value.Decode(m.Value, rb.scratch); err != nil {
			return err
		}
		for _, c := range rb.scratch.Changes {
			r := b.NewRow()
			for j, i := range rb.valueCols {
				r[i] = c.Row[j]
			}
			b.Append(c.Kind, r)
		}
	}
	if b.Len() == before {
		return nil // a tombstone or a blank record: no change
	}
	var key row.Row
	if rb.key != nil {
		rb.keyScratch.Changes = rb.keyScratch.Changes[:0]
		if err := rb.key.Decode(m.Key, rb.keyScratch); err != nil {
			b.Changes = b.Changes[:before]
			return fmt.Errorf("key: %w", err)
		}
		if len(rb.keyScratch.Changes) > 0 {
			key = rb.keyScratch.Changes[0].Row
		}
	}
	// Computed once per message, not per change: an update brings two.
	meta := rb.metaVals
	for j, mc := range rb.meta {
		meta[j] = metaValue(m, mc.key)
	}
	for _, c := range b.Changes[before:] {
		for j, i := range rb.keyCols {
			if key != nil {
				c.Row[i] = key[j]
			} else if rb.key != nil {
				c.Row[i] = row.NullValue // no key, or an empty one
			}
		}
		for j, mc := range rb.meta {
			c.Row[mc.pos] = meta[j]
		}
	}
	return nil
}

// metaValue is the value of metadata key k for m; NULL for a key the
// source does not offer (the planner refuses those before a run).
func metaValue(m *kafka.Message, k string) row.Value {
	switch k {
	case metaTopic:
		return row.StringValue(m.Topic)
	case metaPartition:
		return row.IntValue(int32(m.Partition))
	case metaOffset:
		return row.BigIntValue(m.Offset)
	case metaTimestamp:
		if m.Time.IsZero() {
			return row.NullValue
		}
		return row.TimestampLTZValue(m.Time.UnixMilli() * 1000)
	case metaKey:
		if m.Key == nil {
			return row.NullValue
		}
		return row.BytesValue(m.Key)
	case metaHeaders:
		keys := make([]row.Value, len(m.Headers))
		vals := make([]row.Value, len(m.Headers))
		for i, h := range m.Headers {
			keys[i] = row.StringValue(h.Key)
			if h.Value != nil {
				vals[i] = row.BytesValue(h.Value)
			}
		}
		return row.MapValue(keys, vals)
	}
	return row.NullValue
}
