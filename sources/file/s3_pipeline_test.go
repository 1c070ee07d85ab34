package file_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// s3Rows is a CSV of n rows of the round trips' schema.
func s3Rows(n int) string {
	var b strings.Builder
	for i := range n {
		name := fmt.Sprintf("bidder %d, \"q\"", i%17)
		if i%11 == 0 {
			name = ""
		}
		fmt.Fprintf(&b, "%d,%q,%d.%02d,2026-12-06 22:%02d:%02d.%03d\n", i, name, i*37%1000, i%100, i/60%60, i%60, i%1000)
	}
	return strings.ReplaceAll(b.String(), `\"`, `""`)
}

const s3Schema = `[id BIGINT, name STRING, "price DECIMAL(10,2)", ts TIMESTAMP(3)]`

// TestS3RoundTrip writes rows to object storage with the file sink in
// each format the file connectors have, reads them back with the file
// source from an s3:// glob, and compares them with what went in:
// credentials come from the s3 block as ${VAR} for the sink and from the
// AWS environment for the source.
func TestS3RoundTrip(t *testing.T) {
	srv := testenv.S3(t)
	bucket := srv.Bucket(t)
	in := s3Rows(3000)
	// want is the rows as the csv format prints them, read from disk.
	refDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(refDir, "in.csv"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	pipefile.Run(t, testenv.Context(t, time.Minute), pipeline.Env{Registry: builtin.Registry()}, refDir, fmt.Sprintf(`version: 1
name: ref
sources:
  - {name: s, type: file, path: %s, schema: %s}
sinks:
  - {name: out, from: s, type: file, path: %s}
`, filepath.Join(refDir, "in.csv"), s3Schema, filepath.Join(refDir, "out.csv")))
	ref, err := os.ReadFile(filepath.Join(refDir, "out.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := string(ref)
	if strings.Count(want, "\n") != 3000 {
		t.Fatalf("reference of %d lines", strings.Count(want, "\n"))
	}
	for _, spec := range []string{"csv", "json", "debezium-json", "canal-json", "maxwell-json", "{type: parquet, row_group_size: 400}", "{type: avro, codec: zstd, block_size: 4096}"} {
		format := strings.TrimSuffix(strings.TrimPrefix(strings.Fields(spec)[0], "{type:"), ",")
		if format == "" {
			format = strings.Fields(spec)[1]
			format = strings.TrimSuffix(format, ",")
		}
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("S3_TEST_KEY_ID", srv.AccessKey)
			t.Setenv("S3_TEST_SECRET", srv.SecretKey)
			write := fmt.Sprintf(`version: 1
name: s3-write
sources:
  - {name: s, type: file, path: %s, schema: %s}
sinks:
  - name: out
    from: s
    type: file
    path: s3://%s/%s
    format: %s
    rolling: {file_size: 20KiB}
    s3: {endpoint: %q, region: %s, access_key_id: "${S3_TEST_KEY_ID}", secret_access_key: "${S3_TEST_SECRET}"}
`, src, s3Schema, bucket, format, spec, srv.Endpoint, srv.Region)
			pipefile.Run(t, testenv.Context(t, time.Minute), pipeline.Env{Registry: builtin.Registry()}, dir, write)
			keys := srv.Keys(t, bucket, format+"/")
			if len(keys) < 2 {
				t.Fatalf("objects %v: want several parts", keys)
			}
			for _, k := range keys {
				if strings.Contains(k, "/.") {
					t.Errorf("%s left behind", k)
				}
			}

			srv.Setenv(t)
			out := filepath.Join(dir, "out.csv")
			mode, key := "", ""
			if strings.Contains(format, "-json") {
				mode, key = ", mode: retract", ", key: [id]"
			}
			read := fmt.Sprintf(`version: 1
name: s3-read
sources:
  - {name: s, type: file, path: "s3://%s/%s/part-*", format: %s, schema: %s%s}
sinks:
  - {name: out, from: s, type: file, path: %s%s}
`, bucket, format, format, s3Schema, key, out, mode)
			pipefile.Run(t, testenv.Context(t, time.Minute), pipeline.Env{Registry: builtin.Registry()}, dir, read)
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			text := string(got)
			if mode != "" {
				text = strings.ReplaceAll(strings.TrimPrefix(text, "+I,"), "\n+I,", "\n")
			}
			if text != want {
				gl, wl := strings.Split(text, "\n"), strings.Split(want, "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("read back %d lines, want %d; line %d:\n%s\nwant\n%s", len(gl), len(wl), i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("read back %d lines, want %d", len(gl), len(wl))
			}
		})
	}
}
