package datagen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

const mixed = `
type: datagen
schema: [id BIGINT, n INT, ok BOOLEAN, name STRING, "price DECIMAL(8, 2)", temp DOUBLE, f FLOAT, raw BYTES, d DATE, ts TIMESTAMP(3)]
fields:
  id:    {kind: sequence, start: 1, end: 100000}
  n:     {min: -5, max: 5, null_rate: 0.2}
  name:  {length: 8, null_rate: 0.1}
  price: {min: 0, max: 999.99}
  temp:  {min: -10, max: 45}
  raw:   {length: 3}
  d:     {kind: sequence, start: 2024-01-01}
  ts:    {kind: sequence, start: "2024-01-01 00:00:00", step: 250ms}
`

func TestSeedReproducible(t *testing.T) {
	cases := []struct {
		name string
		src  string
	}{
		{"mixed", mixed + "seed: 42\n"},
		{"numbers only", "type: datagen\nseed: 7\nschema: [a INT, b BIGINT, c DOUBLE, d BOOLEAN]\n"},
		{"strings and nulls", "type: datagen\nseed: -3\nschema: [s VARCHAR(20), b BYTES]\nfields: {s: {null_rate: 0.5}}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := readRows(t, mustBuild(t, tc.src), 500, 64)
			b, _ := readRows(t, mustBuild(t, tc.src), 500, 128)
			if !slices.Equal(printed(a), printed(b)) {
				t.Fatalf("same seed, different rows:\n%v\n%v", printed(a)[:3], printed(b)[:3])
			}
			other := regexp.MustCompile(`seed: -?\d+`).ReplaceAllString(tc.src, "seed: 1234567")
			c, _ := readRows(t, mustBuild(t, other), 500, 64)
			if slices.Equal(printed(a), printed(c)) {
				t.Fatalf("different seeds gave the same rows")
			}
		})
	}
}

func TestRandomSeedIsLogged(t *testing.T) {
	var logs bytes.Buffer
	src := "type: datagen\nschema: [a BIGINT, s STRING]\n"
	s, err := buildWith(t, src, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`level=INFO .* seed=(-?\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no seed logged at Info: %q", logs.String())
	}
	got, _ := readRows(t, s, 50, 50)
	again, _ := readRows(t, mustBuild(t, src+"seed: "+m[1]+"\n"), 50, 50)
	if !slices.Equal(printed(got), printed(again)) {
		t.Fatalf("the logged seed %s does not reproduce the run", m[1])
	}
}

func TestSequences(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"int", "schema: [id INT]\nfields: {id: {kind: sequence, start: 1, end: 4}}",
			[]string{"+I[1]", "+I[2]", "+I[3]", "+I[4]"}},
		{"negative bigint", "schema: [id BIGINT]\nfields: {id: {kind: sequence, start: -2, end: 0}}",
			[]string{"+I[-2]", "+I[-1]", "+I[0]"}},
		{"string", "schema: [s VARCHAR(2)]\nfields: {s: {kind: sequence, start: 9, end: 11}}",
			[]string{"+I[9]", "+I[10]", "+I[11]"}},
		{"decimal", "schema: [\"p DECIMAL(5, 2)\"]\nfields: {p: {kind: sequence, start: 0.5, end: 2.5}}",
			[]string{"+I[0.50]", "+I[1.50]", "+I[2.50]"}},
		{"double", "schema: [x DOUBLE]\nfields: {x: {kind: sequence, start: 1, end: 3.5}}",
			[]string{"+I[1.0]", "+I[2.0]", "+I[3.0]"}},
		{"float", "schema: [x FLOAT]\nfields: {x: {kind: sequence, start: -1, end: 0}}",
			[]string{"+I[-1.0]", "+I[0.0]"}},
		{"first to end wins", "schema: [a INT, b INT]\nfields: {a: {kind: sequence, start: 1, end: 10}, b: {kind: sequence, start: 5, end: 6}}",
			[]string{"+I[1, 5]", "+I[2, 6]"}},
		{"rows is smaller", "rows: 2\nschema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 10}}",
			[]string{"+I[1]", "+I[2]"}},
		{"timestamp with step", "schema: [ts TIMESTAMP(3)]\nfields: {ts: {kind: sequence, start: \"2024-01-01 00:00:59\", end: \"2024-01-01 00:01:00.5\", step: 500ms}}",
			[]string{"+I[2024-01-01T00:00:59]", "+I[2024-01-01T00:00:59.500]", "+I[2024-01-01T00:01]", "+I[2024-01-01T00:01:00.500]"}},
		{"timestamp_ltz, end not on a step", "schema: [ts TIMESTAMP_LTZ(0)]\nfields: {ts: {kind: sequence, start: \"2024-01-01T10:00:00Z\", end: \"2024-01-01T10:02:30Z\", step: 1m}}",
			[]string{"+I[2024-01-01T10:00:00Z]", "+I[2024-01-01T10:01:00Z]", "+I[2024-01-01T10:02:00Z]"}},
		{"timestamp without end, bounded by rows", "rows: 2\nschema: [ts TIMESTAMP]\nfields: {ts: {kind: sequence, start: 2024-02-29}}",
			[]string{"+I[2024-02-29T00:00]", "+I[2024-02-29T00:00:01]"}},
		{"date", "schema: [d DATE]\nfields: {d: {kind: sequence, start: 2023-12-30, end: 2024-01-05, step: 3d}}",
			[]string{"+I[2023-12-30]", "+I[2024-01-02]", "+I[2024-01-05]"}},
		{"full bigint range", "rows: 2\nschema: [a BIGINT]\nfields: {a: {kind: sequence, start: -9223372036854775808, end: 9223372036854775807}}",
			[]string{"+I[-9223372036854775808]", "+I[-9223372036854775807]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustBuild(t, "type: datagen\n"+tc.src+"\n")
			if !s.Bounded() {
				t.Errorf("Bounded() = false")
			}
			got, ended := readRows(t, s, -1, 3)
			if !ended || !slices.Equal(printed(got), tc.want) {
				t.Fatalf("got %v (ended %v), want %v", printed(got), ended, tc.want)
			}
			if b, err := s.Read(context.Background(), 10); b != nil || !errors.Is(err, io.EOF) {
				t.Fatalf("Read after the end: %v, %v; want nil, io.EOF", b, err)
			}
		})
	}
}

func TestSequenceNullsUseUpValues(t *testing.T) {
	s := mustBuild(t, "type: datagen\nseed: 5\nschema: [id INT]\nfields: {id: {kind: sequence, start: 10, end: 1009, null_rate: 0.5}}\n")
	rows, ended := readRows(t, s, -1, 100)
	if !ended || len(rows) != 1000 {
		t.Fatalf("got %d rows (ended %v), want 1000", len(rows), ended)
	}
	nulls := 0
	for i, r := range rows {
		switch {
		case r[0].IsNull():
			nulls++
		case r[0].Int64() != int64(10+i):
			t.Fatalf("row %d: %v, want %d", i, r[0], 10+i)
		}
	}
	if nulls < 400 || nulls > 600 {
		t.Fatalf("%d nulls in 1000 rows at null_rate 0.5", nulls)
	}
}

func TestBoundedAndRows(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		bounded bool
		rows    int // rows until the end, when bounded
	}{
		{"endless", "schema: [a INT]", false, 0},
		{"rows", "rows: 2500\nschema: [a INT]", true, 2500},
		{"no rows", "rows: 0\nschema: [a INT]", true, 0},
		{"sequence", "schema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 1500}}", true, 1500},
		{"timestamp sequence without end", "schema: [a TIMESTAMP]\nfields: {a: {kind: sequence, start: 2024-01-01}}", false, 0},
		{"random timestamps", "schema: [a TIMESTAMP_LTZ(3)]\nfields: {a: {max_past: 1h}}", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustBuild(t, "type: datagen\n"+tc.src+"\n")
			if s.Bounded() != tc.bounded {
				t.Fatalf("Bounded() = %v, want %v", s.Bounded(), tc.bounded)
			}
			if !tc.bounded {
				if got, ended := readRows(t, s, 5000, 1024); ended || len(got) != 5000 {
					t.Fatalf("an endless source ended after %d rows", len(got))
				}
				return
			}
			var sizes []int
			for {
				b, err := s.Read(context.Background(), 1000)
				if b != nil {
					sizes = append(sizes, b.Len())
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			total := 0
			for _, n := range sizes {
				total += n
			}
			if total != tc.rows {
				t.Fatalf("%d rows in batches %v, want %d", total, sizes, tc.rows)
			}
			if tc.rows > 0 && sizes[len(sizes)-1] == 0 {
				t.Fatalf("the last rows did not come with io.EOF: batches %v", sizes)
			}
		})
	}
}

func TestRatePacing(t *testing.T) {
	s := mustBuild(t, "type: datagen\nrows: 200\nrate: 1000\nschema: [a BIGINT]\n")
	start := time.Now()
	var sizes []int
	for {
		b, err := s.Read(context.Background(), 1024)
		if b != nil {
			sizes = append(sizes, b.Len())
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	total := 0
	for _, n := range sizes {
		total += n
		// The bucket holds 100ms worth at most.
		if n > 100 {
			t.Errorf("a batch of %d rows exceeds the budget at rate 1000", n)
		}
	}
	if total != 200 {
		t.Fatalf("%d rows, want 200", total)
	}
	if elapsed < 150*time.Millisecond {
		t.Fatalf("200 rows at 1000 rows/s took %v, want at least 150ms", elapsed)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("200 rows at 1000 rows/s took %v", elapsed)
	}
	// A steady pace waits once per chunk, not once per row.
	if len(sizes) > 60 {
		t.Errorf("%d reads for 200 rows: pacing is per row", len(sizes))
	}
}

func TestRateWaitEndsWithContext(t *testing.T) {
	s := mustBuild(t, "type: datagen\nrate: 0.1\nschema: [a BIGINT]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	b, err := s.Read(ctx, 10)
	if b != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, %v; want nil and the context's error", b, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Read returned %v after its context ended", d)
	}
}

func TestReadRefusesBadMax(t *testing.T) {
	s := mustBuild(t, "type: datagen\nschema: [a INT]\n")
	if _, err := s.Read(context.Background(), 0); err == nil {
		t.Fatal("Read(0) succeeded")
	}
}

func TestPositionRestore(t *testing.T) {
	cases := []struct {
		name string
		src  string
	}{
		{"mixed", mixed + "seed: 9\nrows: 1000\n"},
		{"sequence ends", "type: datagen\nseed: 1\nschema: [id INT, v DOUBLE]\nfields: {id: {kind: sequence, start: 1, end: 777, null_rate: 0.1}}\n"},
		{"endless", "type: datagen\nseed: 2\nschema: [s STRING, b BOOLEAN]\nfields: {s: {length: 5}}\n"},
	}
	const total = 777
	for _, tc := range cases {
		for _, k := range []int{0, 1, 300, 776} {
			t.Run(tc.name+"/"+strconv.Itoa(k), func(t *testing.T) {
				want, _ := readRows(t, mustBuild(t, tc.src), total, 1024)

				first := mustBuild(t, tc.src)
				head, _ := readRows(t, first, k, 64)
				pos, err := first.Position()
				if err != nil {
					t.Fatal(err)
				}
				second, err := build(t, tc.src)
				if err != nil {
					t.Fatal(err)
				}
				if err := second.Restore(pos); err != nil {
					t.Fatalf("restore: %v", err)
				}
				if err := second.Open(context.Background()); err != nil {
					t.Fatal(err)
				}
				tail, _ := readRows(t, second, total-k, 50)
				got := append(printed(head), printed(tail)...)
				if !slices.Equal(got, printed(want)) {
					for i := range got {
						if i >= len(want) || got[i] != printed(want)[i] {
							t.Fatalf("row %d after restoring at %d: %s, want %s", i, k, got[i], printed(want)[min(i, len(want)-1)])
						}
					}
					t.Fatalf("got %d rows, want %d", len(got), len(want))
				}
			})
		}
	}
}

func TestRestoreKeepsCountersByName(t *testing.T) {
	old := mustBuild(t, "type: datagen\nschema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 10}}\n")
	readRows(t, old, 4, 10)
	pos, err := old.Position()
	if err != nil {
		t.Fatal(err)
	}
	// The edited pipeline adds a sequence column b: it starts from its start.
	s, err := build(t, "type: datagen\nschema: [b INT, a INT]\nfields: {a: {kind: sequence, start: 1, end: 10}, b: {kind: sequence, start: 100, end: 200}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(pos); err != nil {
		t.Fatal(err)
	}
	got, _ := readRows(t, s, 2, 10)
	if want := []string{"+I[100, 5]", "+I[101, 6]"}; !slices.Equal(printed(got), want) {
		t.Fatalf("got %v, want %v", printed(got), want)
	}
}

func TestRestoreRejectsBadPositions(t *testing.T) {
	s := mustBuild(t, "type: datagen\nrows: 10\nschema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 10}}\n")
	readRows(t, s, 3, 10)
	good, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":         nil,
		"version":       append([]byte{9}, good[1:]...),
		"truncated":     good[:len(good)-1],
		"trailing":      append(slices.Clone(good), 0),
		"bad pcg state": {1, 3, 2, 1, 2, 0},
	}
	for name, pos := range cases {
		t.Run(name, func(t *testing.T) {
			fresh := mustBuild(t, "type: datagen\nrows: 10\nschema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 10}}\n")
			if err := fresh.Restore(pos); err == nil {
				t.Fatalf("Restore(%x) succeeded", pos)
			}
			// A failed restore leaves the source at its start.
			if got, _ := readRows(t, fresh, 1, 1); printed(got)[0] != "+I[1]" {
				t.Fatalf("after a failed restore: %v", printed(got))
			}
		})
	}
}
