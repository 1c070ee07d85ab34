package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/postgres"
)

// allTypes is one column of every etld type the sink writes.
var allTypes = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "b", Type: row.Of(row.Boolean)},
	row.Field{Name: "ti", Type: row.TinyInt},
	row.Field{Name: "i", Type: row.Of(row.Int)},
	row.Field{Name: "f", Type: row.Of(row.Float)},
	row.Field{Name: "x", Type: row.Of(row.Double)},
	row.Field{Name: "dec", Type: row.Type{ID: row.Decimal, Precision: 38, Scale: 10}},
	row.Field{Name: "s", Type: row.Of(row.String)},
	row.Field{Name: "vc", Type: row.Type{ID: row.String, Length: 8}},
	row.Field{Name: "bin", Type: row.Of(row.Bytes)},
	row.Field{Name: "d", Type: row.Of(row.Date)},
	row.Field{Name: "tm", Type: row.Type{ID: row.Time, Precision: 3}},
	row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 6}},
	row.Field{Name: "ltz", Type: row.Type{ID: row.TimestampLTZ, Precision: 3}},
	row.Field{Name: "arr", Type: row.ArrayOf(row.Of(row.String))},
	row.Field{Name: "nums", Type: row.ArrayOf(row.Of(row.Int))},
	row.Field{Name: "m", Type: row.MapOf(row.Of(row.String), row.Of(row.BigInt))},
	row.Field{Name: "r", Type: row.RowOf(row.Field{Name: "name", Type: row.Of(row.String)}, row.Field{Name: "n", Type: row.Of(row.Double)})},
)

// TestAllTypes writes a row of every type into a table the sink creates,
// in append and in upsert mode, and reads PostgreSQL's own text of each
// column back: the types create_table makes and the values exact
// (DECIMAL(38) digits, microseconds, bytes, arrays with quotes and NULLs,
// MAP and ROW as jsonb).
func TestAllTypes(t *testing.T) {
	pool, dsn := openDB(t)
	ts := time.Date(2024, 3, 1, 10, 30, 15, 123456000, time.UTC)
	r := row.Row{
		row.BigIntValue(1), row.BoolValue(true), row.IntValue(-128), row.IntValue(2147483647),
		row.FloatValue(0.1), row.DoubleValue(1.5e300),
		decimal(t, "123456789012345678901234567.8901234567", 38, 10),
		row.StringValue("tab\there \"quoted\" \\ back\nline é"), row.StringValue("short"),
		row.BytesValue([]byte{0, 255, '\\', 'x'}), row.DateValue(19783),
		row.TimeOfDayValue(((10*60+30)*60+15)*1e6 + 250000),
		row.TimestampValue(ts.UnixMicro()), row.TimestampLTZValue(ts.UnixMicro()),
		row.ArrayValue([]row.Value{row.StringValue(`a"b`), row.NullValue, row.StringValue("c,d"), row.StringValue(`x\y`)}),
		row.ArrayValue([]row.Value{row.IntValue(1), row.IntValue(-2)}),
		row.MapValue([]row.Value{row.StringValue("k")}, []row.Value{row.BigIntValue(7)}),
		row.StructValue([]row.Value{row.StringValue("ann"), row.DoubleValue(2.5)}),
	}
	want := `1|t|-128|2147483647|0.1|1.5e+300|123456789012345678901234567.8901234567|tab	here "quoted" \ back
line é|short|\x00ff5c78|2024-03-01|10:30:15.25|2024-03-01 10:30:15.123456|2024-03-01 10:30:15.123+00|{"a\"b",NULL,"c,d","x\\y"}|{1,-2}|{"k": 7}|{"n": 2.5, "name": "ann"}`
	wantTypes := "bigint boolean smallint integer real double precision numeric(38,10) text character varying(8) bytea date time(3) without time zone timestamp(6) without time zone timestamp(3) with time zone text[] integer[] jsonb jsonb"
	for _, mode := range []connector.Mode{connector.Append, connector.Upsert} {
		t.Run(mode.String(), func(t *testing.T) {
			name := table(t, pool, "")
			in := connector.SinkInput{Schema: allTypes, Mode: mode}
			if mode == connector.Upsert {
				in.Key = []int{0}
			}
			s := open(t, postgres.Config{DSN: dsn, Table: name, CreateTable: true}, in, connector.SinkEnv{})
			write(t, s, []row.Change{{Kind: row.Insert, Row: r}, {Kind: row.Insert, Row: append(row.Row{row.BigIntValue(2)}, make(row.Row, allTypes.Len()-1)...)}}, 10)
			got := dump(t, pool, name)
			if len(got) != 2 || got[0] != want {
				t.Errorf("row 1 reads\n%s\nwant\n%s", got[0], want)
			}
			if wantNulls := "2" + strings.Repeat("|NULL", allTypes.Len()-1); got[1] != wantNulls {
				t.Errorf("row 2 reads %s, want %s", got[1], wantNulls)
			}
			var types []string
			rows, err := pool.Query(testenv.Context(t, time.Minute), "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 ORDER BY attnum", ident(name))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var ty string
				if err := rows.Scan(&ty); err != nil {
					t.Fatal(err)
				}
				types = append(types, ty)
			}
			if got := strings.Join(types, " "); got != wantTypes {
				t.Errorf("create_table made\n%s\nwant\n%s", got, wantTypes)
			}
		})
	}
}

// TestExistingColumns writes into columns of other types than the ones
// create_table makes: text takes any type as its text (a ROW as JSON),
// json a STRING as the JSON it holds, timestamptz a TIMESTAMP as UTC,
// numeric an INT, a varchar a STRING within its length, uuid a STRING.
func TestExistingColumns(t *testing.T) {
	pool, dsn := openDB(t)
	name := table(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(name)+` (id int PRIMARY KEY, total numeric(12,3), note varchar(5), js json,
		r text, at timestamptz, u uuid, extra text DEFAULT 'x', n double precision)`)
	schema := row.NewSchema(
		row.Field{Name: "ID", Type: row.Type{ID: row.Int, NotNull: true}},
		row.Field{Name: "total", Type: row.Of(row.Int)},
		row.Field{Name: "note", Type: row.Of(row.String)},
		row.Field{Name: "js", Type: row.Of(row.String)},
		row.Field{Name: "r", Type: row.RowOf(row.Field{Name: "a", Type: row.Of(row.Int)})},
		row.Field{Name: "at", Type: row.Type{ID: row.Timestamp, Precision: 3}},
		row.Field{Name: "u", Type: row.Of(row.String)},
		row.Field{Name: "n", Type: row.Type{ID: row.Decimal, Precision: 5, Scale: 2}},
	)
	s := open(t, postgres.Config{DSN: dsn, Table: name}, connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
	at := time.Date(2024, 1, 2, 3, 4, 5, 6000000, time.UTC).UnixMicro()
	write(t, s, []row.Change{ch(row.Insert, row.IntValue(1), row.IntValue(42), row.StringValue("ab"), row.StringValue(`{"k": [1, 2]}`),
		row.StructValue([]row.Value{row.IntValue(3)}), row.TimestampValue(at), row.StringValue("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), row.DecimalValue(12345, 2))}, 1)
	want := []string{`1|42.000|ab|{"k": [1, 2]}|{"a":3}|2024-01-02 03:04:05.006+00|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|x|123.45`}
	if got := dump(t, pool, name); !slices.Equal(got, want) {
		t.Errorf("table %v, want %v", got, want)
	}
}

// TestUpsertMatchesModel writes a random changelog (updates with their
// -U, deletes, keys changing several times per batch) with one and with
// four connections: the table must end as the model of an upsert table.
func TestUpsertMatchesModel(t *testing.T) {
	pool, dsn := openDB(t)
	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			name := table(t, pool, "")
			changes := randomChanges(uint64(par), 5000, 300)
			s := open(t, postgres.Config{DSN: dsn, Table: name, CreateTable: true, BatchSize: 97, Parallelism: par},
				connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
			write(t, s, changes, 250)
			m := model{}
			for _, c := range changes {
				m.apply(c)
			}
			if got, want := dump(t, pool, name), m.lines(); !slices.Equal(got, want) {
				t.Errorf("table has %d rows, the model %d; first difference: %s", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d is %q, want %q", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}

// TestRejectsRows: rows the server refuses for good (too long for a
// varchar, NULL into NOT NULL, a check) and one with a NUL character,
// which has no text form, go to on_error with the reason, in append and
// upsert mode; the other rows of their batches land.
func TestRejectsRows(t *testing.T) {
	pool, dsn := openDB(t)
	for _, mode := range []connector.Mode{connector.Append, connector.Upsert} {
		t.Run(mode.String(), func(t *testing.T) {
			name := table(t, pool, "")
			exec(t, pool, "CREATE TABLE "+ident(name)+" (id bigint PRIMARY KEY, v varchar(4) NOT NULL CHECK (v <> 'bad'))")
			var rj rejects
			in := connector.SinkInput{Schema: kvSchema, Mode: mode}
			if mode == connector.Upsert {
				in.Key = []int{0}
			}
			s := open(t, postgres.Config{DSN: dsn, Table: name}, in, connector.SinkEnv{Reject: rj.reject})
			var changes []row.Change
			var want []string
			for i := range 40 {
				v := row.StringValue(fmt.Sprintf("v%d", i))
				switch i % 10 {
				case 3:
					v = row.StringValue("far too long")
				case 5:
					v = row.NullValue
				case 7:
					v = row.StringValue("bad")
				case 8:
					v = row.StringValue("a\x00b")
				default:
					want = append(want, fmt.Sprintf("%d|v%d", i, i))
				}
				changes = append(changes, ch(row.Insert, row.BigIntValue(int64(i)), v))
			}
			write(t, s, changes, 40)
			slices.Sort(want)
			if got := dump(t, pool, name); !slices.Equal(got, want) {
				t.Errorf("table %v, want %v", got, want)
			}
			if len(rj.recs) != 16 {
				t.Fatalf("%d rows rejected, want 16: %v", len(rj.recs), rj.recs)
			}
			reasons := map[string]int{}
			for _, r := range rj.recs {
				var pe *pgconn.PgError
				switch {
				case errors.As(r.Err, &pe):
					reasons[pe.Code]++
				case strings.Contains(r.Err.Error(), "NUL character"):
					reasons["NUL"]++
				default:
					t.Errorf("rejected for %v", r.Err)
				}
			}
			if want := map[string]int{"22001": 4, "23502": 4, "23514": 4, "NUL": 4}; fmt.Sprint(reasons) != fmt.Sprint(want) {
				t.Errorf("reasons %v, want %v", reasons, want)
			}
		})
	}
}

// TestOpenChecksTable: every problem with the table is an error at Open
// that names the column and what to do.
func TestOpenChecksTable(t *testing.T) {
	pool, dsn := openDB(t)
	name := table(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(name)+" (id bigint, v text, must int NOT NULL, at date)")
	keyless := table(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(keyless)+" (id bigint, v text)")
	upsert := connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}
	appendKV := connector.SinkInput{Schema: kvSchema, Mode: connector.Append}
	tsSchema := row.NewSchema(row.Field{Name: "at", Type: row.Of(row.Double)})
	for _, tc := range []struct {
		name  string
		table string
		in    connector.SinkInput
		want  string
	}{
		{"missing table", strings.ToUpper(name), appendKV, "does not exist in etld@" + serverAddr(t, dsn) + "/etld_test (there is public." + name + ": names are taken as the catalog has them"},
		{"not null column", name, appendKV, `column "must" of table public.` + name + ` is NOT NULL without a default`},
		{"no unique key", keyless, upsert, "has no PRIMARY KEY or UNIQUE index on the upsert key (\"id\")"},
		{"type", name, connector.SinkInput{Schema: tsSchema, Mode: connector.Append}, `column "at" of table public.` + name + ` is date, which cannot hold the input's DOUBLE values`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newBound(postgres.Config{DSN: dsn, Table: tc.table}, tc.in, connector.SinkEnv{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			err = s.Open(testenv.Context(t, time.Minute))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v\nwant an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "etld-test-pw") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func decimal(t testing.TB, text string, p, s int) row.Value {
	t.Helper()
	v, err := row.ParseText(text, row.Type{ID: row.Decimal, Precision: p, Scale: s})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
