package formattest

import (
	"errors"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// IntRanges checks that a decoder keeps TINYINT and SMALLINT in their
// range as Flink's formats do (Byte.parseByte, Short.parseShort): the
// edges read back, one past an edge is a bad record naming its column.
// newDecoder makes the format's decoder over the schema (ti TINYINT, si
// SMALLINT); record writes one record of the two numbers' texts.
func IntRanges(t *testing.T, newDecoder func(row.Schema) connector.Decoder, record func(ti, si string) []byte) {
	t.Helper()
	sch := testenv.Schema(t, "ti TINYINT", "si SMALLINT")
	d := newDecoder(sch)
	for _, ok := range [][2]string{{"-128", "-32768"}, {"127", "32767"}, {"0", "-1"}} {
		b := row.NewBatch(1, 2)
		if err := d.Decode(record(ok[0], ok[1]), b); err != nil {
			t.Fatalf("%s, %s: %v", ok[0], ok[1], err)
		}
		got := b.Changes[0].Row
		if got[0].Text(sch.Fields[0].Type) != ok[0] || got[1].Text(sch.Fields[1].Type) != ok[1] {
			t.Fatalf("%s, %s read as %v", ok[0], ok[1], got)
		}
	}
	for _, bad := range []struct{ ti, si, column string }{
		{"128", "0", "ti"}, {"-129", "0", "ti"}, {"1000", "0", "ti"},
		{"0", "32768", "si"}, {"0", "-32769", "si"},
	} {
		err := d.Decode(record(bad.ti, bad.si), row.NewBatch(1, 2))
		var de *connector.DecodeError
		if !errors.As(err, &de) || de.Column != bad.column {
			t.Errorf("%s, %s: got %v, want a bad record in column %s", bad.ti, bad.si, err, bad.column)
		}
	}
}
