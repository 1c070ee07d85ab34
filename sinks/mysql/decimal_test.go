package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// DECIMAL(38, s) columns: the sink creates them as such and writes values
// past int64 exactly, key column included (upsert by a wide key).
func TestDecimal38(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	schema := row.NewSchema(
		row.Field{Name: "k", Type: row.Type{ID: row.Decimal, Precision: 38, Scale: 0, NotNull: true}},
		row.Field{Name: "v", Type: row.Type{ID: row.Decimal, Precision: 38, Scale: 10}},
		row.Field{Name: "w", Type: row.Type{ID: row.Decimal, Precision: 21, Scale: 4}},
	)
	parse := func(text string, i int) row.Value {
		v, err := row.ParseText(text, schema.Fields[i].Type)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true, BatchSize: 10},
		connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
	ctx := testenv.Context(t, time.Minute)
	k1, k2 := parse("99999999999999999999999999999999999999", 0), parse("-12345678901234567890", 0)
	err := s.Write(ctx, batchOf(
		ch(row.Insert, k1, parse("1234567890123456789012345678.0123456789", 1), parse("9999999998000000.0001", 2)),
		ch(row.Insert, k2, parse("-0.0000000001", 1), row.NullValue),
		ch(row.UpdateAfter, k1, parse("-1234567890123456789012345678.0123456789", 1), parse("0.0001", 2)),
	))
	if err == nil {
		err = s.Flush(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	var colType string
	if err := db.QueryRow("SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'v'", name).Scan(&colType); err != nil {
		t.Fatal(err)
	}
	if colType != "decimal(38,10)" {
		t.Errorf("column v is %s, want decimal(38,10)", colType)
	}
	want := []string{
		"-12345678901234567890|-0.0000000001|NULL",
		"99999999999999999999999999999999999999|-1234567890123456789012345678.0123456789|0.0001",
	}
	if got := dump(t, db, name); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
