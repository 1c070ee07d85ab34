package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/s3conf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// readN reads from s until it has n changes, or fails t after 20 s.
func readN(t *testing.T, s *Source, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	for len(out) < n {
		b, err := s.Read(ctx, 100)
		if err != nil {
			t.Fatalf("read after %d of %d changes: %v", len(out), n, err)
		}
		if b == nil {
			continue
		}
		for _, c := range b.Changes {
			out = append(out, c.String())
		}
	}
	return out
}

// TestS3Follow follows the objects under a prefix: objects put after
// Open are read as they come, hidden ones (a sink's tails, _SUCCESS)
// never; a source restored from a position reads only the objects that
// came after it, and nothing twice.
func TestS3Follow(t *testing.T) {
	srv := testenv.S3(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	h := newHarness(t)
	opts := fmt.Sprintf("path: s3://%s/in/*.csv\nfollow: true\nmonitor_interval: 20ms", bucket)
	srv.Put(t, bucket, "in/a.csv", []byte("a1,1\na2,2\n"))
	srv.Put(t, bucket, "in/.part-00001.csv.inprogress.tail-0", []byte("hidden,9\n"))
	srv.Put(t, bucket, "in/_SUCCESS.csv", []byte("hidden,9\n"))
	s := h.open(opts, "[id STRING, n BIGINT]")
	if s.Bounded() {
		t.Fatal("a followed s3:// source says it is bounded")
	}
	got := readN(t, s, 2)
	srv.Put(t, bucket, "in/b.csv", []byte("b1,3\n"))
	got = append(got, readN(t, s, 1)...)
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	if want := "+I[a1, 1] +I[a2, 2] +I[b1, 3]"; strings.Join(got, " ") != want {
		t.Fatalf("read %v, want %s", got, want)
	}
	s.Close(context.Background())

	srv.Put(t, bucket, "in/c.csv", []byte("c1,4\n"))
	srv.Put(t, bucket, "in/0-early.csv", []byte("e1,5\n"))
	r := h.mustBuild(opts, "[id STRING, n BIGINT]")
	if err := r.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	got = readN(t, r, 2)
	// Objects that came after the position, in name order.
	if want := "+I[e1, 5] +I[c1, 4]"; strings.Join(got, " ") != want {
		t.Fatalf("restored source read %v, want %s (position %s)", got, want, pos)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if b, err := r.Read(ctx, 100); b != nil && b.Len() > 0 {
		t.Fatalf("read %v again", b.Changes)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("idle read: %v, want it to wait for new objects", err)
	}
}

// TestS3Errors: wrong credentials are a clear, permanent error naming
// what to set, and never print the secret; an endpoint that does not
// answer is retried, then named.
func TestS3Errors(t *testing.T) {
	srv := testenv.S3(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	srv.Put(t, bucket, "in/a.csv", []byte("a1,1\n"))
	h := newHarness(t)

	const secret = "not-the-right-secret-4711"
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	s := h.mustBuild(fmt.Sprintf("path: s3://%s/in/*.csv", bucket), "[id STRING, n BIGINT]")
	start := time.Now()
	err := s.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("open with a wrong secret: %v, want the credentials named", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error prints the secret: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a refusal took %v: it is not worth retrying", d)
	}

	old := s3conf.Backoff
	s3conf.Backoff.Initial, s3conf.Backoff.Max, s3conf.Backoff.Attempts = time.Millisecond, 5*time.Millisecond, 3
	t.Cleanup(func() { s3conf.Backoff = old })
	srv.Setenv(t)
	u := h.mustBuild(fmt.Sprintf("path: s3://%s/in/*.csv\ns3: {endpoint: \"http://127.0.0.1:1\"}", bucket), "[id STRING, n BIGINT]")
	err = u.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("open of an unreachable endpoint: %v, want it named after the retries", err)
	}
}

// parquetOf encodes rows of (id STRING, n BIGINT) as a Parquet file.
func parquetOf(t *testing.T, rows ...row.Row) []byte {
	t.Helper()
	r := connector.NewRegistry()
	formats.Register(r)
	enc, err := r.NewBulkEncoder(connector.FormatSpec{Type: "parquet"}, row.NewSchema(
		row.Field{Name: "id", Type: row.Type{ID: row.String}}, row.Field{Name: "n", Type: row.Type{ID: row.BigInt}}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := enc.Create(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rows {
		if err := w.Write(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func idN(id string, n int64) row.Row { return row.Row{row.StringValue(id), row.BigIntValue(n)} }

// TestS3FollowParquet follows Parquet objects: each is complete once it
// is listed, so new ones are read as they come, and a restore reads only
// those after its position.
func TestS3FollowParquet(t *testing.T) {
	srv := testenv.S3(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	h := newHarness(t)
	opts := fmt.Sprintf("path: s3://%s/lake/*.parquet\nformat: parquet\nfollow: true\nmonitor_interval: 20ms", bucket)
	srv.Put(t, bucket, "lake/a.parquet", parquetOf(t, idN("a1", 1), idN("a2", 2)))
	s := h.open(opts, "[id STRING, n BIGINT]")
	got := readN(t, s, 2)
	srv.Put(t, bucket, "lake/b.parquet", parquetOf(t, idN("b1", 3)))
	got = append(got, readN(t, s, 1)...)
	if want := "+I[a1, 1] +I[a2, 2] +I[b1, 3]"; strings.Join(got, " ") != want {
		t.Fatalf("read %v, want %s", got, want)
	}
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())

	srv.Put(t, bucket, "lake/c.parquet", parquetOf(t, idN("c1", 4)))
	r := h.mustBuild(opts, "[id STRING, n BIGINT]")
	if err := r.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if got := readN(t, r, 1); strings.Join(got, " ") != "+I[c1, 4]" {
		t.Fatalf("restored source read %v, want only c1 (position %s)", got, pos)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if b, err := r.Read(ctx, 100); b != nil && b.Len() > 0 {
		t.Fatalf("read %v again", b.Changes)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("idle read: %v, want it to wait for new objects", err)
	}
}
