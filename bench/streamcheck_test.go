package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Flink's debezium-json changelog and etld's retract csv of the same
// final table fold to the batch csv's checksum; a different final value
// does not.
func TestChecksumDebeziumMatchesRetractCSV(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	batch := write("batch.csv", "a,2,30\nb c,1,5\n")
	retract := write("etld.csv", "+I,a,1,10\n+I,b c,1,5\n-U,a,1,10\n+U,a,2,30\n")
	write("flink/part-0", `{"before":null,"after":{"k":"a","n":1,"s":10},"op":"c"}
{"before":{"k":"a","n":1,"s":10},"after":null,"op":"d"}
`)
	write("flink/part-1", `{"before":null,"after":{"k":"b c","n":1,"s":5},"op":"c"}
{"before":null,"after":{"k":"a","n":2,"s":30},"op":"c"}
{"before":{"k":"x","n":1,"s":1},"after":{"k":"x","n":1,"s":2},"op":"u"}
`)
	bad := write("bad/part-0", `{"before":null,"after":{"k":"a","n":2,"s":31},"op":"c"}
{"before":null,"after":{"k":"b c","n":1,"s":5},"op":"c"}
`)
	nb, sb, err := checksum(batch, false)
	if err != nil {
		t.Fatal(err)
	}
	nr, sr, err := checksum(retract, true)
	if err != nil {
		t.Fatal(err)
	}
	// The update of x retracts a row never inserted: an error.
	if _, _, err := checksumDebezium(filepath.Join(dir, "flink")); err == nil {
		t.Fatal("a retraction of a row never inserted was taken")
	}
	if err := os.Remove(filepath.Join(dir, "flink", "part-1")); err != nil {
		t.Fatal(err)
	}
	write("flink/part-1", `{"before":null,"after":{"k":"b c","n":1,"s":5},"op":"c"}
{"before":null,"after":{"k":"a","n":2,"s":30},"op":"c"}
`)
	nf, sf, err := checksumDebezium(filepath.Join(dir, "flink"))
	if err != nil {
		t.Fatal(err)
	}
	if nb != 2 || nr != 2 || nf != 2 || sb != sr || sb != sf {
		t.Errorf("same table: batch %d %s, retract %d %s, debezium %d %s", nb, sb, nr, sr, nf, sf)
	}
	if _, sx, err := checksumDebezium(bad); err != nil || sx == sb {
		t.Errorf("a different table: %s (%v), same as %s", sx, err, sb)
	}
}

func TestDebeziumRowsOrderAndNull(t *testing.T) {
	before, after, err := debeziumRows([]byte(`{"op":"u","before":{"z":1,"a":null,"s":"x,y"},"after":{"z":2,"a":true,"s":""},"ts_ms":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if before == nil || *before != "1,,x,y" || after == nil || *after != "2,true," {
		t.Errorf("got %v %v", before, after)
	}
	if _, _, err := debeziumRows([]byte(`{"after":{"k":[1]}}`)); err == nil {
		t.Error("a nested value was taken")
	}
}
