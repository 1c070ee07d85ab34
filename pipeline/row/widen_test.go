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
