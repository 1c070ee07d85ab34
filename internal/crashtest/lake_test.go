package crashtest

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/etld/etld/internal/testenv"
)

// file -> partitioned Parquet: the directory of part files (row groups
// of 1000 rows, parts rolled at 12 KiB, hour partitions committed with
// _SUCCESS once the watermark passed them) must be byte-identical, file
// for file, to an uninterrupted run's: parts resumed from their row
// groups' metadata and the spilled rows, none ever torn under its final
// name.
var fileToParquet = scenario{
	name: "file-parquet-partitioned",
	pipeline: `version: 1
name: crash-lake-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
{{template "readings columns"}}
      - ts AS TO_TIMESTAMP_LTZ(id * 1000, 3)
    watermark: ts - INTERVAL '1' SECOND
transforms:
  - name: hourly
    sql: |
      SELECT id, sensor, temp, ts, DATE_FORMAT(ts, 'yyyy-MM-dd') AS dt, DATE_FORMAT(ts, 'HH') AS hr
      FROM readings
sinks:
  - name: lake
    from: hourly
    type: file
    path: {{.Dir}}/{{.Out}}.dir
    format: {type: parquet, row_group_size: 1000, compression: zstd}
    partition_by: [dt, hr]
    partition_commit:
      delay: 1h
      timestamp_pattern: "$dt $hr:00:00"
    rolling:
      file_size: 12KiB
`,
	setup: writesReadings(3),
	check: sameTrees("ref.dir", "out.dir"),
}

// sameTrees is the check of a scenario whose output is a directory: every
// file under .Dir/out is the reference's file of the same name, byte for
// byte, and no other file (an in-progress part) is left.
func sameTrees(ref, out string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		want, got := treeOf(t, filepath.Join(e.Dir, ref)), treeOf(t, filepath.Join(e.Dir, out))
		if len(want) < 10 {
			t.Fatalf("the reference wrote only %d files", len(want))
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range want {
				if !yield(n) {
					return
				}
			}
		})
		var size int
		for _, n := range names {
			size += len(want[n])
			if g, ok := got[n]; !ok {
				t.Errorf("%s is missing", n)
			} else if !bytes.Equal(g, want[n]) {
				t.Errorf("%s differs from the reference: %d bytes vs %d", n, len(g), len(want[n]))
			}
		}
		for n := range got {
			if _, ok := want[n]; !ok {
				t.Errorf("%s is not in the reference", n)
			}
		}
		t.Logf("%d files, %d bytes, %d of them _SUCCESS", len(want), size, strings.Count(strings.Join(names, " "), "_SUCCESS"))
	}
}

func treeOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCrashParquet(t *testing.T) {
	runScenario(t, fileToParquet)
}

// file -> partitioned Parquet on object storage (the test S3 server):
// the same pipeline as fileToParquet with an s3:// path. Parts are
// multipart uploads completed at the checkpoints' commits and resumed
// from the checkpoint's parts and tail, so the objects must be the
// uninterrupted run's, byte for byte, and no other object (an upload
// completed from a dead life's parts) may be listed.
var fileToParquetS3 = scenario{
	name:     "file-parquet-s3",
	pipeline: strings.Replace(fileToParquet.pipeline, "path: {{.Dir}}/{{.Out}}.dir", "path: s3://{{.Vars.bucket}}/{{.Out}}\n    s3: {endpoint: \"{{.Vars.s3}}\"}", 1),
	needs: func(t *testing.T) map[string]string {
		srv := testenv.S3(t)
		// The lives inherit the credentials from the environment.
		srv.Setenv(t)
		return map[string]string{"bucket": srv.Bucket(t), "s3": srv.Endpoint}
	},
	setup: writesReadings(3),
	reset: func(t *testing.T, e *env) {
		srv := testenv.S3(t)
		c := srv.Client(t)
		ctx := context.Background()
		for u := range c.ListIncompleteUploads(ctx, e.Vars["bucket"], "out/", true) {
			if u.Err == nil {
				_ = c.RemoveIncompleteUpload(ctx, e.Vars["bucket"], u.Key)
			}
		}
		for k := range srv.Objects(t, e.Vars["bucket"], "out/") {
			if err := c.RemoveObject(ctx, e.Vars["bucket"], k, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	},
	check: func(t *testing.T, e *env) {
		srv := testenv.S3(t)
		objects := func(prefix string) map[string][]byte {
			out := map[string][]byte{}
			for k, v := range srv.Objects(t, e.Vars["bucket"], prefix+"/") {
				out[strings.TrimPrefix(k, prefix+"/")] = v
			}
			return out
		}
		sameObjects(t, objects("ref"), objects("out"))
	},
}

// sameObjects compares two directories' files, read into maps.
func sameObjects(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	if len(want) < 10 {
		t.Fatalf("the reference wrote only %d objects", len(want))
	}
	for n, w := range want {
		if g, ok := got[n]; !ok {
			t.Errorf("%s is missing", n)
		} else if !bytes.Equal(g, w) {
			t.Errorf("%s differs from the reference: %d bytes vs %d", n, len(g), len(w))
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s is not in the reference", n)
		}
	}
	t.Logf("%d objects", len(want))
}

func TestCrashParquetS3(t *testing.T) {
	runScenario(t, fileToParquetS3)
}

// file -> partitioned Avro object container files on object storage:
// fileToParquetS3's pipeline writing avro parts in blocks of 2 KiB. A
// part resumes after the blocks its checkpoint counted, the rows of the
// block it was filling given back from the spill, so the objects must be
// the uninterrupted run's, byte for byte.
var fileToAvroS3 = scenario{
	name:     "file-avro-s3",
	pipeline: strings.Replace(fileToParquetS3.pipeline, "format: {type: parquet, row_group_size: 1000, compression: zstd}", "format: {type: avro, codec: deflate, block_size: 2048}", 1),
	needs:    fileToParquetS3.needs,
	setup:    writesReadings(3),
	reset:    fileToParquetS3.reset,
	check:    fileToParquetS3.check,
}

func TestCrashAvroS3(t *testing.T) {
	runScenario(t, fileToAvroS3)
}
