package file

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// referenceDir is a partition directory written the plain way, one
// value's text at a time into a new string and each byte looked up in
// Hive's list: what partitioner.dir must write.
func referenceDir(names []string, types []row.Type, cols []int, r row.Row) string {
	esc := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\^{[]", c) >= 0 {
				fmt.Fprintf(&b, "%%%02X", c)
				continue
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	var parts []string
	for k, i := range cols {
		v := ""
		if !r[i].IsNull() {
			v = esc(r[i].Text(types[k]))
		}
		if v == "" {
			v = defaultPartition
		}
		parts = append(parts, esc(names[k])+"="+v)
	}
	return strings.Join(parts, "/")
}

var partSchema = testenv.Schema(&testing.T{}, "id BIGINT", "s STRING", "n BIGINT", "d DATE", "ts TIMESTAMP(3)", "ok BOOLEAN", "x DECIMAL(6,2)")

// partRows are random rows whose partition columns take few values, some
// NULL, empty or holding the bytes a path escapes.
func partRows(rng *rand.Rand, n int) []row.Row {
	texts := []string{"a", "", "b/c", "d=e", "50%", "x y", "tab\there", "q'\"#*?", "ü", "[{^\\:}]", "\x7f", "__DEFAULT_PARTITION__"}
	rows := make([]row.Row, n)
	for i := range rows {
		r := row.Row{
			row.BigIntValue(int64(i)),
			row.StringValue(texts[rng.IntN(len(texts))]),
			row.BigIntValue(int64(rng.IntN(5) - 2)),
			row.DateValue(int32(19000 + rng.IntN(3))),
			row.TimestampValue(1704067200000000 + int64(rng.IntN(4))*60_500_000),
			row.BoolValue(rng.IntN(2) == 0),
			row.DecimalValue(int64(rng.IntN(3)*125-100), 2),
		}
		for j := 1; j < len(r); j++ {
			if rng.IntN(9) == 0 {
				r[j] = row.NullValue
			}
		}
		rows[i] = r
	}
	return rows
}

func TestPartitionDirMatchesReference(t *testing.T) {
	names := []string{"s", "n", "d", "ts", "ok", "x"}
	p, err := newPartitioner(names, PartitionCommit{Trigger: triggerNone})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.bind(partSchema); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, r := range partRows(rng, 3000) {
		if got, want := string(p.dir(r)), referenceDir(names, p.types, p.cols, r); got != want {
			t.Fatalf("row %v: dir %q, want %q", r, got, want)
		}
	}
}

// TestPartitionedFilesHoldTheirRows writes random rows in batches of
// random size through a partitioned csv sink and reads the directories
// back: each partition's files hold exactly the ids of the rows whose
// reference directory it is, in their order, and nothing else is there.
func TestPartitionedFilesHoldTheirRows(t *testing.T) {
	for _, cols := range [][]string{{"s"}, {"s", "n"}, {"d", "s", "ok"}, {"ts", "x", "n", "s"}} {
		t.Run(strings.Join(cols, ","), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(cols)), 7))
			rows := partRows(rng, 2000)
			out := t.TempDir()
			options := "format: csv\npartition_by: [" + strings.Join(cols, ", ") + "]\npartition_commit: {trigger: none}\nrolling: {file_size: 2KiB}"
			sink, err := buildAny(t, "path: "+out+"\n"+options)
			if err != nil {
				t.Fatal(err)
			}
			s := sink.(*DirSink)
			if err := s.Bind(connector.SinkInput{Schema: partSchema, Mode: connector.Append}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := s.Open(ctx); err != nil {
				t.Fatal(err)
			}
			l := &dirLife{t: t, s: s}
			for next := 0; next < len(rows); {
				n := min(1+rng.IntN(300), len(rows)-next)
				b := row.NewBatch(n, partSchema.Len())
				for _, r := range rows[next : next+n] {
					b.Append(row.Insert, slices.Clone(r))
				}
				if err := s.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
				next += n
				if rng.IntN(4) == 0 {
					l.checkpoint(true)
				}
			}
			l.finish()

			var idx []int
			var types []row.Type
			for _, c := range cols {
				i := partSchema.Index(c)
				idx, types = append(idx, i), append(types, partSchema.Fields[i].Type)
			}
			want := map[string][]string{}
			for _, r := range rows {
				d := referenceDir(cols, types, idx, r)
				want[d] = append(want[d], strconv.FormatInt(r[0].Int64(), 10))
			}
			got := map[string][]string{}
			files := tree(t, out)
			var fileNames []string
			for name := range files {
				fileNames = append(fileNames, name)
			}
			// Parts are numbered in the order they were opened: the
			// rows of a partition are in its parts in that order.
			slices.SortFunc(fileNames, func(a, b string) int { return partNum(t, a) - partNum(t, b) })
			for _, name := range fileNames {
				d := filepath.ToSlash(filepath.Dir(name))
				for _, line := range strings.Split(strings.TrimSuffix(string(files[name]), "\n"), "\n") {
					id, _, _ := strings.Cut(line, ",")
					got[d] = append(got[d], id)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d partitions, want %d", len(got), len(want))
			}
			for d, ids := range want {
				if !slices.Equal(got[d], ids) {
					t.Errorf("partition %s holds %d rows %v..., want %d", d, len(got[d]), head(got[d]), len(ids))
				}
			}
		})
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// partNum is the sequence number in a part file's name.
func partNum(t *testing.T, name string) int {
	base := filepath.Base(name)
	digits := strings.TrimLeft(base, "abcdefghijklmnopqrstuvwxyz-_.")
	end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end > 0 {
		digits = digits[:end]
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		t.Fatalf("part file %s: no number in its name", name)
	}
	return n
}
