package json

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// fastSchema has a column of each kind the one-pass decode reads its own
// way and of some it leaves to the general path, NOT NULL ones, ROWs
// nested two deep for paths, a name in mixed case.
var fastSchema = func() row.Schema {
	s, err := testenv.ParseSchema("id BIGINT", "s STRING", "i INT", "d DOUBLE", "n BIGINT NOT NULL", "m DECIMAL(38,10)",
		"t TIMESTAMP(3)", "ti TINYINT", "b BOOLEAN",
		"r ROW<x BIGINT, y STRING, z ROW<p INT, q DOUBLE>, `dateTime` TIMESTAMP(3)>",
		"c ROW<x BIGINT NOT NULL, w STRING>", "a ARRAY<BIGINT>", "sn STRING NOT NULL", "dateTime TIMESTAMP(3)")
	if err != nil {
		panic(err)
	}
	return s
}()

// fastPaths are the paths of fastSchema's ROWs a decoder may read.
var fastPathsAll = []connector.FieldPath{
	{Column: 9, Fields: []int{0}}, {Column: 9, Fields: []int{1}}, {Column: 9, Fields: []int{2, 0}}, {Column: 9, Fields: []int{2, 1}},
	{Column: 9, Fields: []int{3}}, {Column: 10, Fields: []int{0}}, {Column: 10, Fields: []int{1}},
}

// fastAndGeneral returns two decoders of fastSchema with the options and
// the projection of mode and proj: one as it is, one without its
// one-pass plan, and the width of their rows.
//
// mode's low two bits: no option, ignore_parse_errors,
// fail_on_missing_field, timestamp_format iso-8601. Its next two: every
// column; SetColumns of proj's bits; DecodeColumns of them (reversed,
// the first twice); DecodePaths of proj's bits over fastPathsAll with the
// ROWs projected away unless proj's bit 15 reads them whole too, after
// a gap of three columns when its bit 14 is set.
func fastAndGeneral(t testing.TB, mode byte, proj uint16) (fast, general *Decoder, width int) {
	var opts Options
	switch mode & 3 {
	case 1:
		opts.IgnoreParseErrors = true
	case 2:
		opts.FailOnMissingField = true
	case 3:
		opts.TimestampFormat = "iso-8601"
	}
	fast, err := NewDecoder(opts, fastSchema)
	if err != nil {
		t.Fatal(err)
	}
	general, _ = NewDecoder(opts, fastSchema)
	width = fastSchema.Len()
	switch mode >> 2 & 3 {
	case 1:
		needed := make([]bool, width)
		for i := range needed {
			needed[i] = proj&(1<<i) != 0
		}
		fast.SetColumns(needed)
		general.SetColumns(needed)
	case 2:
		var cols []int
		for i := range width {
			if proj&(1<<i) != 0 {
				cols = append([]int{i}, cols...)
			}
		}
		if len(cols) > 0 {
			cols = append(cols, cols[0])
			fast.DecodeColumns(cols)
			general.DecodeColumns(cols)
			width = len(cols)
		}
	case 3:
		var paths []connector.FieldPath
		for j, p := range fastPathsAll {
			if proj&(1<<j) != 0 {
				paths = append(paths, p)
			}
		}
		if len(paths) == 0 {
			break
		}
		if proj&(1<<15) == 0 {
			needed := make([]bool, width)
			for i := range needed {
				needed[i] = i != 9 && i != 10
			}
			fast.SetColumns(needed)
			general.SetColumns(needed)
		}
		gap := int(proj >> 14 & 1 * 3) // a table's computed columns' room
		if !fast.DecodePaths(paths, gap) || !general.DecodePaths(paths, gap) {
			t.Fatalf("DecodePaths(%v, %d) refused", paths, gap)
		}
		width += gap + len(paths)
	}
	if fast.codec.fast == nil {
		t.Fatal("no one-pass plan")
	}
	general.codec.fast = nil
	return fast, general, width
}

// sameDecode fails unless the two decodes of rec gave the same rows and
// the same error.
func sameDecode(t testing.TB, rec string, ferr, gerr error, fb, gb *row.Batch) {
	t.Helper()
	switch {
	case (ferr == nil) != (gerr == nil) || ferr != nil && ferr.Error() != gerr.Error():
		t.Fatalf("%q: the one-pass decode gave error %v, the general path %v", rec, ferr, gerr)
	case fb.Len() != gb.Len():
		t.Fatalf("%q: the one-pass decode gave %d rows, the general path %d", rec, fb.Len(), gb.Len())
	}
	for k := range fb.Changes {
		// The values' encodings: exact, NaN's bits and a DECIMAL's
		// scale included.
		if f, g := row.AppendRow(nil, fb.Changes[k].Row), row.AppendRow(nil, gb.Changes[k].Row); !bytes.Equal(f, g) {
			t.Fatalf("%q: the one-pass decode gave %v, the general path %v", rec, fb.Changes[k].Row, gb.Changes[k].Row)
		}
	}
}

// fastSeeds are records for fastSchema, common and not.
var fastSeeds = []string{
	`{"id":1,"s":"a","i":2,"d":2.5,"n":3,"m":1.25,"t":"2024-01-02 03:04:05.678","ti":5,"b":true,"r":{"x":1,"y":"s","z":{"p":2,"q":0.5},"dateTime":"2024-01-02 03:04:05.006"},"c":{"x":1,"w":"v"},"a":[1,2],"sn":"x","dateTime":"2024-01-02 00:00:00"}`,
	`{"n":-9223372036854775808,"sn":"","id":9223372036854775807,"i":-2147483648,"ti":-128}`,
	`{"n":999999999999999999,"sn":"e\"s\\c\/\n\u00e9\ud83d\ude00\ud800","id":-999999999999999999,"i":2147483648}`,
	`{"n":1000000000000000000,"sn":"x","id":9223372036854775808,"ti":128,"d":1.7976931348623157e308,"m":99999999999999999999999999.9999999999}`,
	`{"n":0,"sn":"x","d":1e309,"m":1e-11,"id":-0,"i":0123}`, `{"n":1.0,"sn":"x","id":1e3,"i":1E+2,"ti":"12","d":"NaN","m":"1.5"}`,
	`{"n":1,"sn":"x","r":null,"c":null,"a":null,"s":null}`, `{"n":1,"sn":null}`, `{"sn":"x"}`, `{}`, `{"n":1,"sn":"x","n":2}`,
	`{"N":1,"SN":"x","DATETIME":"2024-01-02 00:00:00","ID":7}`, `{"\u006e":1,"sn":"x","u":{"deep":[1,{"a":"\u0041"}],"e":[]}}`,
	` { "n" : 1 , "sn" : "x" } `, "{\"n\":1,\t\"sn\":\"x\"}\r", "{\"n\":1,\n\"sn\":\"x\"}", "\uFEFF{\"n\":1,\"sn\":\"x\"}", " \r\n", "",
	`{"n":1,"sn":"x","t":"2024-01-02T03:04:05"}`, `{"n":1,"sn":"x","t":"2024-01-02 03:04"}`, `{"n":1,"sn":"x","t":" 2024-01-02 03:04:05"}`,
	`{"n":1,"sn":"x","t":"2024-02-30 00:00:00"}`, `{"n":1,"sn":"x","t":1704189600123,"r":{"dateTime":"2024-01-02T03:04:05Z"}}`,
	`{"n":1,"sn":"x","r":{"x":1,"x":2}}`, `{"n":1,"sn":"x","r":{"z":{"p":"7"},"y":5}}`, `{"n":1,"sn":"x","c":{"w":"v"}}`, `{"n":1,"sn":"x","c":{"x":null}}`,
	`{"n":1,"sn":"x","r":[1]}`, `{"n":1,"sn":"x","r":"s"}`, `{"n":1,"sn":"x","s":{"a":[1,"}"]}}`, `{"n":1,"sn":"x","s":12.50}`,
	`{"n":1,"sn":"x"`, `{"n":1,"sn":"x"}}`, `{"n":1,"sn":"x",}`, `{"n":1 "sn":"x"}`, `{"n":-,"sn":"x"}`, `{"n":1,"sn":"a` + "\x01" + `b"}`,
	`{"n":1,"sn":"\x"}`, `{"n":1,"sn":"\u12"}`, `{"n":1,"sn":"x","u":tru}`, `{"n":1,"sn":"x","u":[1,]}`, `{"n":1,"sn":"x","u":01}`,
	`{"n":1,"sn":"x","u":1.}`, `{"n":1,"sn":"x","u":1e}`, `{"n":1,"sn":"\xff\xfe"}`, `[1]`, `not json`, `{"n":1,"sn":"x"} x`,
	// Escapes in a top-level STRING and in the STRING fields of paths
	// (unescaped from the first escape the scan stopped at), after plain
	// runs shorter and longer than a word, and bad ones.
	`{"n":1,"sn":"x","s":"plain run longer than a word\\then\"more\/","r":{"y":"a\\b"},"c":{"x":1,"w":"\u00e9 and a long plain run after it\n"}}`,
	`{"n":1,"sn":"x","s":"\\","r":{"y":"0123456789abcdef\t"},"c":{"x":1,"w":"\ud83d\ude00"}}`,
	`{"n":1,"sn":"x","s":"a\x","r":{"y":"ok"}}`, `{"n":1,"sn":"x","r":{"y":"0123456789\u12"}}`, `{"n":1,"sn":"x","c":{"x":1,"w":"a\`,
	`{"n":1,"sn":"x","r":{"y":"0123456789\\` + "\x01" + `"}}`, `{"n":1,"sn":"x","s":"a\\b","s":"c"}`,
	// Integers of 8 digits and more (the first 8 a word at a time).
	`{"n":12345678,"sn":"x","id":123456789,"r":{"x":-100000000},"c":{"x":1234567890123456}}`,
	`{"n":12345678.5,"sn":"x"}`, `{"n":1234567890123456789,"sn":"x"}`, `{"n":1,"sn":"x","r":{"x":12345678e2}}`,
}

// FuzzDecodeFastPath checks decode, which tries the one-pass decode
// first, against the general path alone, on any record, options and
// projection: the same row, or the same error.
func FuzzDecodeFastPath(f *testing.F) {
	for _, s := range fastSeeds {
		for _, mode := range []byte{0, 1, 2, 3, 4, 5, 8, 10, 12, 13, 14} {
			f.Add(s, mode, uint16(0x5a5a))
			f.Add(s, mode, uint16(0xffff))
		}
	}
	f.Fuzz(func(t *testing.T, rec string, mode byte, proj uint16) {
		fast, general, width := fastAndGeneral(t, mode, proj)
		fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
		sameDecode(t, rec, fast.DecodeString(rec, fb), general.DecodeString(rec, gb), fb, gb)
	})
}

// FuzzDecodeLine checks DecodeLine, which finds the line's end in its
// one pass, against the general path's DecodeString of the line.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range fastSeeds {
		for _, end := range []string{"\n", "\r\n", "", " \t\r\n", "\n{\"n\":2}"} {
			f.Add(s+end, byte(0), uint16(0))
			f.Add(s+end, byte(12), uint16(0x5a))
		}
	}
	f.Fuzz(func(t *testing.T, data string, mode byte, proj uint16) {
		checkLine(t, data, mode, proj)
	})
}

func checkLine(t testing.TB, data string, mode byte, proj uint16) {
	t.Helper()
	fast, general, width := fastAndGeneral(t, mode, proj)
	fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
	n, ferr := fast.DecodeLine(data, fb)
	line, want := cutLine(data)
	sameDecode(t, data, ferr, general.DecodeString(line, gb), fb, gb)
	if n != want {
		t.Fatalf("%q: DecodeLine took %d bytes, the line has %d", data, n, want)
	}
}

// TestFastPathProperty: random records for fastSchema (members in and
// out of order, in another case, twice, unknown, escaped; values good,
// bad and at the edges of their types; blanks; now and then malformed)
// under random options and projections decode as the general path
// decodes them, by DecodeString and by DecodeLine; and the one-pass
// decode takes most of them itself.
func TestFastPathProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n, good, taken := 10000, 0, 0
	if testing.Short() {
		n = 2000
	}
	for range n {
		mode, proj := byte(r.IntN(16)), uint16(r.Uint32())
		rec := randomRecord(r)
		fast, general, width := fastAndGeneral(t, mode, proj)
		fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
		gerr := general.DecodeString(rec, gb)
		sameDecode(t, rec, fast.DecodeString(rec, fb), gerr, fb, gb)
		if gerr == nil && mode&3 != 1 && gb.Len() > 0 {
			// A record without an error (ignore_parse_errors makes
			// some errors NULLs, which the general path decides).
			good++
			if _, ok := fast.codec.decodeFast(rec, row.NewBatch(1, width).NewRow()); ok {
				taken++
			}
		}
		next := []string{"", "\n", "\r\n", "\n" + randomRecord(r)}[r.IntN(4)]
		checkLine(t, rec+next, mode, proj)
	}
	// The others have a member twice, a line break inside, or an error
	// in a column the row does not read.
	if taken < good*2/5 {
		t.Fatalf("the one-pass decode took %d of %d records without an error", taken, good)
	}
	t.Logf("the one-pass decode took %d of %d records without an error (%d in all)", taken, good, n)
}

// TestFastPathPrefixes: every prefix of full records, and every record
// with one byte replaced, decode as the general path decodes them:
// the one-pass decode stops anywhere without reading past the end.
func TestFastPathPrefixes(t *testing.T) {
	for _, rec := range fastSeeds[:3] {
		for k := range len(rec) {
			for _, mode := range []byte{0, 2, 8, 12} {
				fast, general, width := fastAndGeneral(t, mode, 0x7f7f)
				fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
				sameDecode(t, rec[:k], fast.DecodeString(rec[:k], fb), general.DecodeString(rec[:k], gb), fb, gb)
				for _, c := range []byte{'"', ',', '}', '\\', '\n', 'x'} {
					bad := rec[:k] + string(c) + rec[k+1:]
					fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
					sameDecode(t, bad, fast.DecodeString(bad, fb), general.DecodeString(bad, gb), fb, gb)
				}
			}
		}
	}
}

// randomRecord is a record for fastSchema; half of them clean: no
// member twice, no NULL for a NOT NULL column, not malformed, a value of
// another type rarer.
func randomRecord(r *rand.Rand) string {
	clean := r.IntN(2) == 0
	blank := func() string {
		switch {
		case r.IntN(8) != 0:
			return ""
		case r.IntN(60) == 0:
			return "\n" // a line break inside the object: the general path's
		}
		return []string{" ", "\t", "\r", "  "}[r.IntN(4)]
	}
	var sb strings.Builder
	sb.WriteString(blank() + "{" + blank())
	cols := fastSchema.Fields
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	if r.IntN(6) == 0 {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	first := true
	member := func(name, value string) {
		if !first {
			sb.WriteString(blank() + "," + blank())
		}
		first = false
		sb.WriteString(quoteName(r, name) + blank() + ":" + blank() + value)
	}
	for _, i := range order {
		t := cols[i].Type
		switch k := r.IntN(20); {
		case k == 0 && !(clean && t.NotNull):
			continue // missing
		case k == 1:
			member("u"+cols[i].Name, randomValue(r, row.Of(row.String), 0, false))
		case k == 2 && !clean:
			member(cols[i].Name, randomValue(r, t, 0, false)) // twice
		}
		member(cols[i].Name, randomValue(r, t, 0, clean))
	}
	sb.WriteString(blank() + "}" + blank())
	rec := sb.String()
	if !clean && r.IntN(12) == 0 {
		// Malformed: cut short, or a byte replaced.
		k := r.IntN(len(rec))
		if r.IntN(2) == 0 {
			return rec[:k]
		}
		const junk = "\"{}[],:\\0-ex\x01"
		return rec[:k] + string(junk[r.IntN(len(junk))]) + rec[k+1:]
	}
	return rec
}

// quoteName writes a member name: as it is, in another case, or with an
// escape.
func quoteName(r *rand.Rand, name string) string {
	switch r.IntN(30) {
	case 0:
		return `"` + strings.ToUpper(name) + `"`
	case 1:
		return fmt.Sprintf(`"\u%04x%s"`, name[0], name[1:])
	}
	return `"` + name + `"`
}

// randomValue is a value for a member of type t: of its type most often,
// at its edges now and then, of another type or null sometimes (rarely
// when clean, and null never for a NOT NULL type then).
func randomValue(r *rand.Rand, t row.Type, depth int, clean bool) string {
	if r.IntN(12) == 0 && !(clean && t.NotNull) {
		return "null"
	}
	if r.IntN(15) == 0 && (!clean || r.IntN(10) == 0) {
		t = []row.Type{row.Of(row.BigInt), row.Of(row.String), row.Of(row.Double), row.Of(row.Boolean)}[r.IntN(4)]
	}
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	edge := r.IntN(3) == 0 && (!clean || r.IntN(8) == 0)
	switch t.ID {
	case row.BigInt, row.Int:
		if edge {
			return pick("0", "-0", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
				"999999999999999999", "-999999999999999999", "1000000000000000000", "2147483647", "2147483648", "-2147483648",
				"-2147483649", "127", "128", "-128", "-129", "32767", "32768", "1.0", "1e3", "1E+2", "2.5", `"42"`, `" 42 "`, "0123", "-")
		}
		if t.IntBits() < 32 {
			return fmt.Sprint(r.Int64N(256) - 128)
		}
		return fmt.Sprint(r.Int64N(2000000) - 1000000)
	case row.Double:
		if !edge {
			return pick("0.1", "1.5", "3", "-2.5E-3")
		}
		return pick("1.7976931348623157e308", "1e309", "-1e309", "4.9e-324", "5e-325", "0.1", "-0.0", "1.5", "3", `"NaN"`, `"-Infinity"`, "2.5E-3")
	case row.Decimal:
		if !edge {
			return pick("1.25", "0", "-1.5")
		}
		return pick("1.25", "0", "-1.5", "1e-11", "1.2345e2", "1e400", "9999999999999999999999999999.9999999999",
			"99999999999999999999999999999", "0.00000000005", `"3.5"`)
	case row.Boolean:
		if !edge {
			return pick("true", "false")
		}
		return pick("true", "false", `"true"`, "1", "tru")
	case row.Timestamp:
		if edge {
			return pick(`"2024-01-02T03:04:05.678"`, `"2024-01-02 03:04:05"`, `"2024-01-02 03:04"`, `"2024-01-02T03:04"`,
				`"2024-01-02 03:04:05.1234567891"`, `"2024-02-30 00:00:00"`, `" 2024-01-02 03:04:05"`, `"2024-01-02 03:04:05 "`,
				`"2024-01-02 03:04:05Z"`, "1704189600123", `"2024-01-02 24:00:00"`, `"2024-01-02 03:04:05.\u0031"`)
		}
		return fmt.Sprintf(`"2024-01-%02d %02d:%02d:%02d.%03d"`, 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
	case row.String:
		return randomString(r)
	case row.Struct:
		if depth > 2 || r.IntN(10) == 0 {
			return pick("[1]", `"s"`, "7", "{}")
		}
		var ms []string
		for _, f := range t.Fields() {
			if r.IntN(8) == 0 {
				continue
			}
			name := f.Name
			if r.IntN(20) == 0 {
				name = strings.ToUpper(name)
			}
			if r.IntN(15) == 0 {
				ms = append(ms, fmt.Sprintf(`"u%s":%s`, name, randomValue(r, f.Type, depth+1, clean)))
			}
			ms = append(ms, fmt.Sprintf(`"%s":%s`, name, randomValue(r, f.Type, depth+1, clean)))
			if r.IntN(25) == 0 {
				ms = append(ms, fmt.Sprintf(`"%s":%s`, name, randomValue(r, f.Type, depth+1, clean)))
			}
		}
		if r.IntN(6) == 0 {
			r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		}
		return "{" + strings.Join(ms, ",") + "}"
	case row.Array:
		var es []string
		for range r.IntN(4) {
			es = append(es, randomValue(r, t.Elem(), depth+1, clean))
		}
		return "[" + strings.Join(es, ", ") + "]"
	}
	return "null"
}

// randomString is a JSON string: plain, escaped, non-ASCII, long, now
// and then invalid.
func randomString(r *rand.Rand) string {
	parts := []string{"a", "sensor_", "42", " ", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\uDC00x`,
		"é", "😀", "\xff", "https://www.nexmark.com/vzw/oqk/item.htm?query=1", "[]{},:"}
	bad := []string{"\x01", `\x`, `\u12`, "\n"}
	var sb strings.Builder
	sb.WriteByte('"')
	for range r.IntN(12) {
		sb.WriteString(parts[r.IntN(len(parts))])
	}
	if r.IntN(40) == 0 {
		sb.WriteString(bad[r.IntN(len(bad))])
	}
	sb.WriteByte('"')
	return sb.String()
}

// TestFastPathTakesCommonRecords: the records the benchmarks read (the
// matrix's keys, Nexmark's events) take the one-pass decode, each
// column's kind included, and give the general path's rows.
func TestFastPathTakesCommonRecords(t *testing.T) {
	keys := testenv.Schema(t, "id BIGINT", "ik BIGINT", "sk STRING", "ta STRING", "tb BIGINT", "z BIGINT", "amount BIGINT")
	nexmark := testenv.Schema(t, "event_type INT",
		"person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>",
		"auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>",
		"bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>")
	bid := `{"event_type":2,"person":null,"auction":null,"bid":{"auction":1006,"bidder":2001,"price":21233,"channel":"Facebook","url":"https://www.nexmark.com/vzw/oqk/yi_k/item.htm?query=1","dateTime":"2024-01-01 00:00:00.004","extra":"aaP_QPa]KYYXURWIJHPagnwctWaQVMSaXLS` + "`" + `[ukqiyh_^VHVNWY\\YO_R]PPH"}}`
	person := `{"event_type":0,"person":{"id":1001,"name":"Sarah Spencer","emailAddress":"qmr uw@l.com","creditCard":"1857 8091 8014 4142","city":"Los Angeles","state":"ID","dateTime":"2024-01-01 00:00:00.005","extra":"kidJYOSSKNL` + "`" + `QUNMa\\I\\STI_L^QaNTOXaO[\\XV_x"},"auction":null,"bid":null}`
	for _, c := range []struct {
		name   string
		schema row.Schema
		rec    string
		cols   []int
		paths  []connector.FieldPath
	}{
		{"keys", keys, `{"id":0,"ik":56346,"sk":"sensor_56346","ta":"g5634","tb":6,"z":4,"amount":9328}`, nil, nil},
		{"keys, escapes and long numbers", keys, `{"id":12345678,"ik":123456789012,"sk":"sensor\\56346 \"q\" \u00e9","ta":"g5634\/","tb":6,"z":-87654321,"amount":9328}`, nil, nil},
		{"keys picked", keys, `{"id":0,"ik":56346,"sk":"sensor_56346","ta":"g5634","tb":6,"z":4,"amount":9328}`, []int{2, 6}, nil},
		{"nexmark bid", nexmark, bid, nil, nil},
		{"nexmark bid, paths", nexmark, bid, nil, []connector.FieldPath{{Column: 1, Fields: []int{6}}, {Column: 2, Fields: []int{5}},
			{Column: 3, Fields: []int{0}}, {Column: 3, Fields: []int{2}}, {Column: 3, Fields: []int{5}}, {Column: 3, Fields: []int{6}}}},
		{"nexmark person, paths", nexmark, person, nil, []connector.FieldPath{{Column: 1, Fields: []int{6}}, {Column: 1, Fields: []int{7}},
			{Column: 2, Fields: []int{5}}, {Column: 3, Fields: []int{5}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var decs [2]*Decoder
			width := c.schema.Len()
			for k := range decs {
				d, err := NewDecoder(Options{}, c.schema)
				if err != nil {
					t.Fatal(err)
				}
				if c.cols != nil && !d.DecodeColumns(c.cols) {
					t.Fatal("DecodeColumns refused")
				}
				if c.paths != nil {
					needed := []bool{true, false, false, false}
					d.SetColumns(needed)
					if !d.DecodePaths(c.paths, 0) {
						t.Fatal("DecodePaths refused")
					}
				}
				decs[k] = d
			}
			switch {
			case c.cols != nil:
				width = len(c.cols)
			case c.paths != nil:
				width += len(c.paths)
			}
			fast, general := decs[0], decs[1]
			general.codec.fast = nil
			if _, ok := fast.codec.decodeFast(c.rec, row.NewBatch(1, width).NewRow()); !ok {
				t.Fatalf("the one-pass decode refused %s", c.rec)
			}
			fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
			n, err := fast.DecodeLine(c.rec+"\n{", fb)
			if err != nil || n != len(c.rec)+1 {
				t.Fatalf("DecodeLine: %d, %v", n, err)
			}
			sameDecode(t, c.rec, nil, general.DecodeString(c.rec, gb), fb, gb)
		})
	}
}
