package datagen

import (
	"fmt"
	"math"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FlinkSource implements connector.FlinkSource: Flink's datagen
// connector, whose options etld's follow (fields.<col>.kind, min, max,
// length, max-past, start, end, null-rate, number-of-rows,
// rows-per-second). Sequences give the same rows; random columns do not,
// Flink's datagen having no seed.
func (s *Source) FlinkSource() (connector.FlinkTable, error) {
	var t connector.FlinkTable
	c := s.given
	t.Set("connector", "datagen", "")
	if c.Rows != nil {
		t.Set("number-of-rows", fmt.Sprint(*c.Rows), "rows")
	}
	if c.Rate > 0 {
		t.Set("rows-per-second", fmt.Sprint(int64(math.Ceil(c.Rate))), "rate")
		if c.Rate != math.Ceil(c.Rate) {
			t.Differ("rate", "Flink's rows-per-second is a whole number: %v becomes %v", c.Rate, math.Ceil(c.Rate))
		}
	} else {
		// etld: as fast as possible; Flink's default is 10000 a second.
		t.Set("rows-per-second", fmt.Sprint(int64(math.MaxInt32)), "rate")
	}
	random := false
	for _, f := range s.schema.Fields {
		fc, name := s.field(f.Name)
		field := "fields." + name
		key := "fields." + f.Name + "."
		kind := strings.ToLower(fc.Kind)
		if kind == "" {
			kind = "random"
		}
		if kind == "sequence" && f.Type.ID.Temporal() {
			return t, fmt.Errorf("fields.%s: a sequence of %s values is etld's: Flink's datagen makes sequences of numbers and strings only", name, f.Type)
		}
		t.Set(key+"kind", kind, field+".kind")
		if kind == "random" {
			random = true
		}
		set := func(opt string, v *string, sub string) {
			if v != nil {
				t.Set(key+opt, *v, field+"."+sub)
			}
		}
		set("min", fc.Min, "min")
		set("max", fc.Max, "max")
		set("start", fc.Start, "start")
		set("end", fc.End, "end")
		if kind == "random" && (f.Type.ID == row.Float || f.Type.ID == row.Double) {
			// etld draws floats from [0, 1) by default; Flink from
			// (Double.MIN_VALUE, Double.MAX_VALUE).
			if fc.Min == nil {
				t.Set(key+"min", "0", field+".min")
			}
			if fc.Max == nil {
				t.Set(key+"max", "1", field+".max")
			}
		}
		if fc.Length != nil {
			t.Set(key+"length", fmt.Sprint(*fc.Length), field+".length")
		} else if kind == "random" && (f.Type.ID == row.String || f.Type.ID == row.Bytes) && (f.Type.Length == 0 || f.Type.Length > 100) {
			t.Set(key+"length", "100", field+".length")
		}
		if fc.MaxPast != nil {
			t.Set(key+"max-past", connector.FlinkDuration(*fc.MaxPast), field+".max_past")
		}
		if fc.NullRate != nil {
			t.Set(key+"null-rate", fmt.Sprint(*fc.NullRate), field+".null_rate")
		}
		if fc.Step != nil {
			t.Differ(field+".step", "Flink's datagen has no step; the option is dropped")
		}
	}
	if random {
		t.Differ("seed", "Flink's datagen takes no seed: its random columns get other values than etld's (sequences are the same)")
	}
	return t, nil
}

// field returns the generator options of the column and the name they
// are under (the fields mapping matches column names case-insensitively).
func (s *Source) field(col string) (FieldConfig, string) {
	if fc, ok := s.given.Fields[col]; ok {
		return fc, col
	}
	for name, fc := range s.given.Fields {
		if strings.EqualFold(name, col) {
			return fc, name
		}
	}
	return FieldConfig{}, col
}

var _ connector.FlinkSource = (*Source)(nil)
