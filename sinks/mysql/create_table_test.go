package mysql_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// TestCreateTableKeysFitTheIndex: create_table gives every text key
// column of an upsert sink a VARCHAR (VARBINARY) length such that the
// primary key fits the server's index (3072 bytes in InnoDB, utf8mb4
// taking 4 a character), counting the key's other columns too; other
// STRING columns stay LONGTEXT. A row whose key values fill the created
// columns is stored and upserted by that key. A declared length no index
// can hold is a clear error at start naming the column.
func TestCreateTableKeysFitTheIndex(t *testing.T) {
	db, dsn := openDB(t)
	str, varchar := row.Of(row.String), func(n int) row.Type { return row.Type{ID: row.String, Length: n} }
	dec := row.Type{ID: row.Decimal, Precision: 38, Scale: 0}
	cases := []struct {
		name   string
		fields []row.Field
		key    []int
	}{
		{"four strings and a bigint", []row.Field{{Name: "a", Type: str}, {Name: "b", Type: str}, {Name: "c", Type: str}, {Name: "d", Type: str}, {Name: "n", Type: row.Of(row.BigInt)}, {Name: "v", Type: str}}, []int{0, 1, 2, 3, 4}},
		{"three strings and a decimal", []row.Field{{Name: "d", Type: dec}, {Name: "a", Type: str}, {Name: "b", Type: str}, {Name: "c", Type: str}, {Name: "v", Type: str}}, []int{0, 1, 2, 3}},
		{"a short varchar leaves room", []row.Field{{Name: "code", Type: varchar(10)}, {Name: "name", Type: str}, {Name: "raw", Type: row.Of(row.Bytes)}, {Name: "v", Type: str}}, []int{0, 1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := table(t, db, "")
			schema := row.NewSchema(tc.fields...)
			s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true},
				connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: tc.key}, connector.SinkEnv{})
			types, lengths := columnTypes(t, db, name)
			if types["v"] != "longtext" {
				t.Errorf("non-key column v is %s, want longtext", types["v"])
			}
			ctx := testenv.Context(t, time.Minute)
			full := func(v int64) row.Row {
				r := make(row.Row, schema.Len())
				for i, f := range schema.Fields {
					switch f.Type.ID {
					case row.String:
						r[i] = row.StringValue(strings.Repeat("é", lengths[f.Name]))
					case row.Bytes:
						r[i] = row.BytesValue([]byte(strings.Repeat("\xff", lengths[f.Name])))
					case row.BigInt:
						r[i] = row.BigIntValue(v * 0)
					case row.Decimal:
						r[i] = row.DecimalValue(7, 0)
					}
				}
				r[schema.Index("v")] = row.StringValue(fmt.Sprint(v))
				return r
			}
			for _, k := range tc.key {
				f := schema.Fields[k]
				if (f.Type.ID == row.String || f.Type.ID == row.Bytes) && lengths[f.Name] < 10 {
					t.Errorf("key column %s is %s(%d): too short to be of use", f.Name, types[f.Name], lengths[f.Name])
				}
			}
			if err := s.Write(ctx, batchOf(row.Change{Kind: row.Insert, Row: full(1)})); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, batchOf(row.Change{Kind: row.UpdateAfter, Row: full(2)})); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var n int
			var v string
			if err := db.QueryRow("SELECT COUNT(*), MAX(v) FROM `"+name+"`").Scan(&n, &v); err != nil {
				t.Fatal(err)
			}
			if n != 1 || v != "2" {
				t.Errorf("table holds %d rows, v = %s; want the one row, upserted to 2", n, v)
			}
		})
	}

	t.Run("a declared length no index holds", func(t *testing.T) {
		name := table(t, db, "")
		schema := row.NewSchema(row.Field{Name: "id", Type: varchar(1000)}, row.Field{Name: "v", Type: str})
		// Bind refuses it, so that etld validate does.
		_, err := newBound(mysql.Config{DSN: dsn, Table: name, CreateTable: true}, connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
		var fe *connector.FieldError
		if !errors.As(err, &fe) || fe.Field != "create_table" || !strings.Contains(err.Error(), "key column id VARCHAR(1000)") || !strings.Contains(err.Error(), "3072 bytes") {
			t.Fatalf("Bind = %v, want an error on create_table naming the key column and the index's 3072 bytes", err)
		}
	})
}

// columnTypes reads the DATA_TYPE and the length in characters (bytes
// for binary columns) of each column of table name.
func columnTypes(t *testing.T, db *sql.DB, name string) (map[string]string, map[string]int) {
	t.Helper()
	rows, err := db.Query("SELECT COLUMN_NAME, DATA_TYPE, COALESCE(CHARACTER_MAXIMUM_LENGTH, 0) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, lengths := map[string]string{}, map[string]int{}
	for rows.Next() {
		var c, typ string
		var n int64
		if err := rows.Scan(&c, &typ, &n); err != nil {
			t.Fatal(err)
		}
		types[c], lengths[c] = typ, int(min(n, 1<<20))
	}
	return types, lengths
}

// TestCreateTableSmallIntegers: create_table gives TINYINT and SMALLINT
// columns their own MySQL types (as Flink's JDBC dialect maps them), a
// key of them included, and writes their extremes.
func TestCreateTableSmallIntegers(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	schema := row.NewSchema(
		row.Field{Name: "k", Type: row.TinyInt},
		row.Field{Name: "x", Type: row.TinyInt},
		row.Field{Name: "y", Type: row.SmallInt},
		row.Field{Name: "z", Type: row.Of(row.Int)},
	)
	s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true},
		connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
	var types string
	if err := db.QueryRow("SELECT GROUP_CONCAT(DATA_TYPE, ' ', IS_NULLABLE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if types != "tinyint NO,tinyint YES,smallint YES,int YES" {
		t.Errorf("column types %q, want tinyint, tinyint, smallint, int", types)
	}
	ctx := testenv.Context(t, time.Minute)
	i := row.IntValue
	if err := s.Write(ctx, batchOf(
		ch(row.Insert, i(-128), i(-128), i(-32768), i(1)), ch(row.Insert, i(127), i(127), i(32767), i(2)),
	)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(dump(t, db, name), " ")
	if want := "-128|-128|-32768|1 127|127|32767|2"; got != want {
		t.Errorf("table %q, want %q", got, want)
	}
}
