package expr

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestFlink23Functions: expected values taken from Flink 2.3 (run by
// hand, and the conformance cases fn29-*).
func TestFlink23Functions(t *testing.T) {
	runEvalCases(t, []evalCase{
		// OVERLAY: Java's UTF-16 units, Flink's rules past the end.
		{"OVERLAY('abcdef' PLACING 'XY' FROM 2)", "STRING NOT NULL aXYdef"},
		{"OVERLAY('abcdef' PLACING 'XY' FROM 2 FOR 3)", "STRING NOT NULL aXYef"},
		{"OVERLAY('abcdef' PLACING 'XY' FROM 10)", "STRING NOT NULL abcdef"},
		{"OVERLAY('abcdef' PLACING 'XY' FROM 0)", "STRING NOT NULL abcdef"},
		{"OVERLAY('abcdef' PLACING 'XY' FROM 2 FOR 0)", "STRING NOT NULL aXY"},
		{"OVERLAY('abcdef' PLACING 'XY' FROM 2 FOR -1)", "STRING NOT NULL aXY"},
		{"OVERLAY('abcdef' PLACING '' FROM 1 FOR 100)", "STRING NOT NULL "},
		{"OVERLAY('x' PLACING 'ab' FROM 1 FOR 4294967297)", "STRING NOT NULL ab"},
		{"OVERLAY('日本語😀x' PLACING 'XY' FROM 3)", "STRING NOT NULL 日本XY?x"},
		{"OVERLAY('日本語😀x' PLACING 'XY' FROM 3 FOR 1)", "STRING NOT NULL 日本XY😀x"},
		{"OVERLAY(x_s PLACING 'a' FROM 1)", "STRING null"},
		{"OVERLAY('a' PLACING 'b' FROM x_i)", "STRING null"},
		{"OVERLAY('x' PLACING 'ab' FROM 1 FOR 2147483647)", "error: out of the string"},
		{"OVERLAY('x' PLACING 1 FROM 1)", "error: OVERLAY argument 2 must be a STRING"},
		// INET_ATON, INET_NTOA
		{"INET_ATON('127.0.0.1')", "BIGINT 2130706433"},
		{"INET_ATON('127.1')", "BIGINT 2130706433"},
		{"INET_ATON('127.0.1')", "BIGINT 2130706433"},
		{"INET_ATON('4294967295')", "BIGINT 4294967295"},
		{"INET_ATON('4294967296')", "BIGINT null"},
		{"INET_ATON('256.0.0.1')", "BIGINT null"},
		{"INET_ATON('1.2.3.4.5')", "BIGINT null"},
		{"INET_ATON('1..2')", "BIGINT null"},
		{"INET_ATON('')", "BIGINT null"},
		{"INET_ATON(' 1')", "BIGINT null"},
		{"INET_NTOA(2130706433)", "STRING 127.0.0.1"},
		{"INET_NTOA(-1)", "STRING null"},
		{"INET_NTOA(4294967295)", "STRING 255.255.255.255"},
		{"INET_NTOA(4294967296)", "STRING null"},
		{"INET_NTOA(x_i)", "STRING null"},
		// IS_DECIMAL: Java's number parsers.
		{"IS_DECIMAL('1.5')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL(' 1')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('1e5')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('0x1p3')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('1.5f')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('NaN')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('+.5e-3')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('1.')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('.')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL('1_0')", "BOOLEAN NOT NULL false"},
		// Java's parseLong takes any decimal digit of the BMP (Java 17).
		{"IS_DECIMAL('١٢٣')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('-١٢')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('𝟙𝟚')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL('١.٥')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL('٩٩٩٩٩٩٩٩٩٩٩٩٩٩٩٩٩٩٩٩')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL('+')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL('-9223372036854775808')", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL('abc')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL('')", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL(x_s)", "BOOLEAN NOT NULL false"},
		{"IS_DECIMAL(n)", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL(temp)", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL(x_i)", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL(x_d)", "BOOLEAN NOT NULL true"},
		{"IS_DECIMAL(d)", "BOOLEAN NOT NULL false"},
		{"CURRENT_DATABASE()", "STRING NOT NULL default_database"},
		// ENCODE, DECODE
		{"ENCODE('héllo', 'UTF-8')", "BYTES NOT NULL [104, -61, -87, 108, 108, 111]"},
		{"ENCODE('héllo', 'US-ASCII')", "BYTES NOT NULL [104, 63, 108, 108, 111]"},
		{"ENCODE('a😀', 'ascii')", "BYTES NOT NULL [97, 63]"},
		{"ENCODE('ab', 'UTF-32')", "BYTES NOT NULL [0, 0, 0, 97, 0, 0, 0, 98]"},
		{"ENCODE('A', 'UTF-16')", "BYTES NOT NULL [-2, -1, 0, 65]"},
		{"DECODE(ENCODE('héllo', 'ISO-8859-1'), 'latin1')", "STRING NOT NULL héllo"},
		{"DECODE(ENCODE('h😀', 'UTF-16LE'), 'UTF-16LE')", "STRING NOT NULL h😀"},
		{"DECODE(X'E282', 'UTF-8')", "STRING NOT NULL \uFFFD"},
		{"DECODE(X'EDA080', 'UTF-8')", "STRING NOT NULL \uFFFD"},
		{"DECODE(X'FF41', 'UTF-8')", "STRING NOT NULL \uFFFDA"},
		{"DECODE(X'80', 'US-ASCII')", "STRING NOT NULL \uFFFD"},
		{"DECODE(X'FEFF0041', 'UTF-16BE')", "STRING NOT NULL \uFEFFA"},
		{"DECODE(X'0041FF', 'UTF-16')", "STRING NOT NULL A\uFFFD"},
		{"ENCODE(x_s, 'UTF-8')", "BYTES null"},
		{"ENCODE('a', 'EBCDIC-XYZ')", "error: unsupported charset"},
		{"ENCODE('a', id)", "error: unsupported charset"},
		{"DECODE('a', 'UTF-8')", "error: DECODE argument 1 must be BYTES"},
		// STR_TO_MAP: Java's split and HashMap order (CAST shows it).
		{"CAST(STR_TO_MAP('a=1,b=2') AS STRING)", "STRING NOT NULL {a=1, b=2}"},
		{"CAST(STR_TO_MAP('b=1') AS STRING)", "STRING NOT NULL {b=1}"},
		{"CAST(MAP_KEYS(STR_TO_MAP('k=1,j=2')) AS STRING)", "STRING NOT NULL [j, k]"},
		{"CAST(STR_TO_MAP('k=1,j=2,a=3') AS STRING)", "STRING NOT NULL {a=3, j=2, k=1}"},
		{"CAST(STR_TO_MAP('a=1,,b=2,') AS STRING)", "STRING NOT NULL {=NULL, a=1, b=2}"},
		{"CAST(STR_TO_MAP(',') AS STRING)", "STRING NOT NULL {}"},
		{"CAST(STR_TO_MAP('') AS STRING)", "STRING NOT NULL {}"},
		{"CAST(STR_TO_MAP('a=1,a=2') AS STRING)", "STRING NOT NULL {a=2}"},
		{"CAST(STR_TO_MAP('a:1;b:2', ';', ':') AS STRING)", "STRING NOT NULL {a=1, b=2}"},
		{"CAST(STR_TO_MAP('a.b|c.d', '|', '.') AS STRING)", "STRING NOT NULL {=}"},
		{"CAST(STR_TO_MAP('x=a=b') AS STRING)", "STRING NOT NULL {x=a=b}"},
		{"STR_TO_MAP(x_s)", "MAP<STRING, STRING> null"},
		{"STR_TO_MAP('a', ',')", "error: STR_TO_MAP takes 1 or 3 arguments"},
		// MAP_FROM_ARRAYS, MAP_UNION
		{"CAST(MAP_FROM_ARRAYS(ARRAY[1, 2], ARRAY['a', 'b']) AS STRING)", "STRING NOT NULL {1=a, 2=b}"},
		{"MAP_FROM_ARRAYS(ARRAY[1, 2], ARRAY['a'])", "error: the keys array has 2 elements"},
		{"MAP_FROM_ARRAYS(CAST(NULL AS ARRAY<INT>), ARRAY['a'])", "MAP<INT, STRING NOT NULL> null"},
		{"CAST(MAP_UNION(MAP['a', 1, 'b', 2], MAP['b', 3, 'c', 4]) AS STRING)", "STRING NOT NULL {b=3, c=4, a=1}"},
		{"CAST(MAP_UNION(MAP['a', 1], MAP['b', 2], MAP['a', 3]) AS STRING)", "STRING NOT NULL {a=3, b=2}"},
		{"MAP_UNION(MAP['a', 1], CAST(NULL AS MAP<STRING, INT>))", "MAP<STRING, INT> null"},
		{"MAP_UNION(MAP['a', 1], 1)", "error: MAP_UNION argument 2 must be a MAP"},
		// PRINTF: java.util.Formatter.
		{"PRINTF('%d-%s', n, id)", "STRING 42-sensor-1"},
		{"PRINTF('%s|%5s|%-5s|%S', id, 'ab', n, 'ab')", "STRING sensor-1|   ab|42   |AB"},
		{"PRINTF('%d %05d %+d %x %o %X', n, n, n, n, n, 255)", "STRING 42 00042 +42 2a 52 FF"},
		{"PRINTF('%x|%o|%x', CAST(-5 AS BIGINT), CAST(-5 AS BIGINT), CAST(-1 AS TINYINT))", "STRING fffffffffffffffb|1777777777777777777773|ff"},
		{"PRINTF('%,d|%(d|%#x|% d|%08.3f', 1234567, neg, 1, 1, 0.125e0)", "STRING 1,234,567|(7)|0x1| 1|0000.125"},
		{"PRINTF('%.2f|%.2f|%e|%g|%.3e|%10.4f|%-10.1f|', 0.125e0, 1.005e0, 0.125e0, 0.125e0, 12345.678e0, 0.125e0, 0.125e0)",
			"STRING 0.13|1.01|1.250000e-01|0.125000|1.235e+04|    0.1250|0.1       |"},
		{"PRINTF('%g|%g|%g|%g', 0.0001e0, 123456.0e0, 1234567.0e0, 0.00001e0)", "STRING 0.000100000|123456|1.23457e+06|1.00000e-05"},
		{"PRINTF('%.0f|%.0f|%.1f|%5.1e|%06.2f', 0.5e0, 1.5e0, 0.05e0, 123.456e0, -1.5e0)", "STRING 1|2|0.1|1.2e+02|-01.50"},
		{"PRINTF('%10.3s|%-8b|%B|%2$s %1$s|%<s', 'x', ok, ok)", "STRING          x|true    |TRUE|true x|x"},
		{"PRINTF('%s|%s|%s|%s|%s', d, temp, f, ts, lts)", "STRING 12.50|31.5|1.5|2024-01-02T10:30:45.123|2024-01-02T10:30:45.123"},
		{"PRINTF('%b %b %s %d %05d', x_i, 's', x_s, x_i, x_i)", "STRING false true null null  null"},
		{"PRINTF('%c%c', 65, 128512)", "STRING A😀"},
		// Java 17's String.format, run by hand.
		{"PRINTF('%g|%.3g|%g|%e|%.0e', 0.0e0, 99999.5e0, 1e-5, 0.0e0, 15.0e0)", "STRING 0.00000|1.00e+05|1.00000e-05|0.000000e+00|2e+01"},
		{"PRINTF('%,.2f|%(,.2f|%+.1e|% .3f|%#.0f|%#.0e|%.3f', 1234567.891e0, -1234.5e0, 12.0e0, 2.0e0, 3.0e0, 3.0e0, 1e-10)",
			"STRING 1,234,567.89|(1,234.50)|+1.2e+01| 2.000|3.|3.e+00|0.000"},
		{"PRINTF('%.1f|%.2f|%.3f|%f|%.15f|%.0f', 0.05e0, 2.675e0, 1.0005e0, 1e20, 0.1e0, 2.5e0)",
			"STRING 0.1|2.68|1.001|100000000000000000000.000000|0.100000000000000|3"},
		{"PRINTF('%s|%.1s|%S|%-3c|%c|%5b|%x', CAST(1.0e0/3 AS FLOAT), 'ab', 'héllo', 120, 65, x_b, CAST(-2 AS TINYINT))",
			"STRING 0.33333334|a|HÉLLO|x  |A|false|fe"},
		{"PRINTF('%%|%5%|%n')", "STRING %|    %|\n"},
		{"PRINTF('%d', id)", "STRING null"},
		{"PRINTF('%f', d)", "STRING null"},
		{"PRINTF('%c', 'c')", "STRING null"},
		{"PRINTF('%s')", "STRING null"},
		{"PRINTF('%q', 1)", "STRING null"},
		{"PRINTF('%-s', 1)", "STRING null"},
		{"PRINTF('%99999999s', 1)", "STRING null"},
		{"PRINTF('%.99999999f', 1.5e0)", "STRING null"},
		{"PRINTF(x_s, 1)", "STRING null"},
		{"PRINTF('%tY', ts)", "error: conversion %t is not supported"},
		{"PRINTF('%s', bin)", "error: PRINTF argument 2 must be a number"},
		// RAND and RAND_INTEGER with a seed: java.util.Random's values.
		{"RAND(1)", "DOUBLE NOT NULL 0.7308781907032909"},
		{"RAND(CAST(5 AS TINYINT))", "DOUBLE NOT NULL 0.730519863614471"},
		{"RAND_INTEGER(1, 10)", "INT NOT NULL 5"},
		{"RAND_INTEGER(CAST(5 AS TINYINT), 10)", "INT NOT NULL 7"},
		{"RAND(x_i)", "DOUBLE null"},
		{"RAND_INTEGER(1, x_i)", "INT null"},
		{"RAND_INTEGER(1, 0)", "error: bound must be positive"},
		{"RAND_INTEGER(0)", "error: bound must be positive"},
		{"RAND(b)", "error: RAND argument 1 must be an integer seed"},
		{"RAND_INTEGER(1, b)", "error: RAND_INTEGER argument 2 must be an INT bound"},
		{"CURRENT_WATERMARK(ts)", "TIMESTAMP(3) null"},
		{"CURRENT_WATERMARK(n)", "error: CURRENT_WATERMARK needs the table's event-time column"},
		{"CURRENT_WATERMARK(ts + INTERVAL '1' SECOND)", "error: CURRENT_WATERMARK needs the table's event-time column itself"},
	})
}

// TestRandSequence: a seeded call draws Java's sequence row after row
// (Flink 2.3: RAND(1) over three rows, RAND_INTEGER(1, 10), a seed per
// row); a fresh copy starts it again; unseeded values stay in range.
func TestRandSequence(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{"RAND(1)", []string{"0.7308781907032909", "0.41008081149220166", "0.20771484130971707"}},
		{"RAND_INTEGER(1, 10)", []string{"5", "8", "7"}},
		{"RAND_INTEGER(1, 1000)", []string{"985", "588", "847"}},
		{"RAND_INTEGER(1, 16)", []string{"11", "1", "6"}},
		{"RAND_INTEGER(-7, 2147483647)", []string{"577934662", "1935951297", "1445645590"}},
		{"RAND(n)", []string{"0.7275636800328681", "0.7275636800328681", "0.7275636800328681"}},
	}
	for _, tc := range cases {
		c, err := compileText(t, tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if c.Const {
			t.Fatalf("%s folded to a constant", tc.expr)
		}
		for round := 0; round < 2; round++ {
			var got []string
			for range tc.want {
				v, err := c.Eval(testRow)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("%s round %d: got %v, want %v", tc.expr, round, got, tc.want)
			}
			if c, err = c.Fresh(nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, text := range []string{"RAND()", "RAND_INTEGER(7)"} {
		c, err := compileText(t, text)
		if err != nil {
			t.Fatal(err)
		}
		if c.Clock == "" || c.Const {
			t.Errorf("%s: Clock %q Const %v: a random value is volatile", text, c.Clock, c.Const)
		}
		for range 1000 {
			v, _ := c.Eval(testRow)
			if f := v.Float64(); v.Type() == row.Double && (f < 0 || f >= 1) || v.Type() == row.Int && (v.Int64() < 0 || v.Int64() >= 7) {
				t.Fatalf("%s gave %v", text, v)
			}
		}
	}
}

// TestCurrentWatermark: the call reads the Watermark it was compiled
// with, NULL before the first; Fresh gives a copy reading another.
func TestCurrentWatermark(t *testing.T) {
	c, err := compileText(t, "CURRENT_WATERMARK(ts)")
	if err != nil {
		t.Fatal(err)
	}
	if !c.ReadsWatermark || c.Sequential == "" || len(c.WatermarkOf) != 1 || c.WatermarkOf[0] != 7 {
		t.Fatalf("ReadsWatermark %v Sequential %q WatermarkOf %v", c.ReadsWatermark, c.Sequential, c.WatermarkOf)
	}
	w := NewWatermark()
	run, err := c.Fresh(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		wm   int64
		want string
	}{{NoWatermark, "null"}, {tsMicros, "2024-01-02T10:30:45.123"}, {0, "1970-01-01T00:00"}} {
		w.Set(tc.wm)
		v, err := run.Eval(testRow)
		if err != nil || v.String() != tc.want {
			t.Errorf("watermark %d: got %v, %v; want %s", tc.wm, v, err, tc.want)
		}
	}
	if v, _ := c.Eval(testRow); !v.IsNull() {
		t.Errorf("compiled without a Watermark: got %v, want NULL", v)
	}
	lc, err := compileText(t, "CURRENT_WATERMARK(lts)")
	if err != nil {
		t.Fatal(err)
	}
	w2 := NewWatermark()
	w2.Set(0)
	lrun, _ := lc.Fresh(w2)
	if v, _ := lrun.Eval(testRow); v.Type() != row.TimestampLTZ || lc.Type.String() != "TIMESTAMP_LTZ(3)" {
		t.Errorf("LTZ: got %v of %s", v, lc.Type)
	}
}
