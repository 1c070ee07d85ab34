package row

import (
	"bytes"
	"testing"
)

// TestDecoderWiden: a decoder told to widen INT to BIGINT and FLOAT to
// DOUBLE reads values and keys saved under the narrow types as those a
// BIGINT and DOUBLE column holds: equal values, equal key bytes; other
// types are left alone, and a mapping that would change a payload fails.
func TestDecoderWiden(t *testing.T) {
	narrow := Row{IntValue(-7), FloatValue(1.25), StringValue("x"), NullValue, DecimalValue(123, 2)}
	wide := Row{BigIntValue(-7), DoubleValue(1.25), StringValue("x"), NullValue, DecimalValue(123, 2)}
	d := NewDecoder(AppendRow(nil, narrow))
	d.SetWiden(map[TypeID]TypeID{Int: BigInt, Float: Double})
	got := d.Row()
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	for i := range wide {
		if !Equal(got[i], wide[i]) {
			t.Errorf("value %d: %v of %s, want %v of %s", i, got[i], got[i].Type(), wide[i], wide[i].Type())
		}
	}
	var key, want []byte
	for _, v := range narrow {
		key = AppendKey(key, v)
	}
	for _, v := range wide {
		want = AppendKey(want, v)
	}
	if k := d.WidenKey(key); !bytes.Equal(k, want) || d.Err() != nil {
		t.Errorf("widened key %x, want %x (%v)", k, want, d.Err())
	}
	if k := NewDecoder(nil).WidenKey(key); !bytes.Equal(k, key) {
		t.Error("a decoder without a mapping changed a key")
	}
	bad := NewDecoder(AppendValue(nil, IntValue(1)))
	bad.SetWiden(map[TypeID]TypeID{Int: Double})
	bad.Value()
	if bad.Err() == nil {
		t.Error("INT read as DOUBLE without an error")
	}
	cut := NewDecoder(nil)
	cut.SetWiden(map[TypeID]TypeID{Int: BigInt})
	cut.WidenKey(key[:len(key)-1])
	if cut.Err() == nil {
		t.Error("a cut key widened without an error")
	}
}

// TestDecoderKeyStr: a saved key read with KeyStr or KeyBytes comes
// retagged as WidenKey retags it, and as it is without a mapping; Str
// and Bytes never retag (a string is not always a key).
func TestDecoderKeyStr(t *testing.T) {
	narrow := KeyOf(nil, Row{IntValue(3), StringValue("k")}, []int{0, 1})
	wide := KeyOf(nil, Row{BigIntValue(3), StringValue("k")}, []int{0, 1})
	saved := AppendString(AppendString(AppendString(nil, string(narrow)), string(narrow)), string(narrow))
	d := NewDecoder(saved)
	d.SetWiden(map[TypeID]TypeID{Int: BigInt})
	if s := d.KeyStr(); s != string(wide) {
		t.Errorf("KeyStr %x, want %x", s, wide)
	}
	if b := d.KeyBytes(); !bytes.Equal(b, wide) {
		t.Errorf("KeyBytes %x, want %x", b, wide)
	}
	if s := d.Str(); s != string(narrow) {
		t.Errorf("Str %x, want %x as saved", s, narrow)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	plain := NewDecoder(saved)
	if s, b := plain.KeyStr(), plain.KeyBytes(); s != string(narrow) || !bytes.Equal(b, narrow) {
		t.Errorf("without a mapping: %x, %x, want %x", s, b, narrow)
	}
}

// TestDecoderWidenCols: a decoder told to retag by column retags a
// row's values by their place and a key's by its own list, leaving the
// columns given as Null (an INT that stays an INT beside one that
// widens) and values read on their own as saved; a retag that would
// change a payload fails.
func TestDecoderWidenCols(t *testing.T) {
	saved := Row{IntValue(1), IntValue(2), FloatValue(0.5), IntValue(4)}
	// Key of columns 3 and 0.
	narrowKey := KeyOf(nil, saved, []int{3, 0})
	buf := AppendRow(nil, saved)
	buf = AppendString(buf, string(narrowKey))
	buf = AppendValue(buf, IntValue(5))
	d := NewDecoder(buf)
	d.SetWidenCols([]TypeID{BigInt, Null, Double}, []TypeID{Null, BigInt})
	got := d.Row()
	wantRow := Row{BigIntValue(1), IntValue(2), DoubleValue(0.5), IntValue(4)}
	for i := range wantRow {
		if !Equal(got[i], wantRow[i]) || got[i].Type() != wantRow[i].Type() {
			t.Errorf("value %d: %v of %s, want %v of %s", i, got[i], got[i].Type(), wantRow[i], wantRow[i].Type())
		}
	}
	if k, want := d.KeyStr(), KeyOf(nil, Row{IntValue(4), BigIntValue(1)}, []int{0, 1}); k != string(want) {
		t.Errorf("key %x, want %x", k, want)
	}
	if v := d.Value(); v.Type() != Int {
		t.Errorf("a value read on its own came as %s, want as saved (INT)", v.Type())
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	bad := NewDecoder(AppendRow(nil, Row{IntValue(1)}))
	bad.SetWidenCols([]TypeID{Double}, nil)
	bad.Row()
	if bad.Err() == nil {
		t.Error("INT read as DOUBLE without an error")
	}
}
