package file

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// s3Out makes a bucket on the test S3 server and points the AWS
// environment at it.
func s3Out(t *testing.T) (testenv.S3Server, string) {
	srv := testenv.S3(t)
	srv.Setenv(t)
	return srv, srv.Bucket(t)
}

// crashS3 drops s as a killed process would, after it uploaded a piece
// of bytes the checkpoint never covered under its next part number.
func crashS3(t *testing.T, s *DirSink) {
	for _, p := range s.open {
		p.w.Abort()
		if _, err := p.f.Write(bytes.Repeat([]byte("never covered\n"), partBytes/14+1)); err != nil {
			t.Fatal(err)
		}
		p.f.Close()
	}
}

// TestS3DirResume is TestDirResume on object storage: the objects under
// the prefix are those the run on disk without a crash wrote, byte for
// byte, though each life is killed after uploading a part past its last
// checkpoint. The json case has parts of several 5 MiB pieces, resumed
// from a checkpoint in the middle of them; the parquet cases resume from
// tails.
func TestS3DirResume(t *testing.T) {
	srv, bucket := s3Out(t)
	old := partBytes
	partBytes = 5 << 20
	t.Cleanup(func() { partBytes = old })
	// onS3: the reference run writes to object storage too (a record
	// format without partitions writes one file on disk).
	cases := []struct {
		options string
		rows    int
		life    int
		onS3    bool
		every   int
	}{
		{"format: {type: parquet, row_group_size: 40}\nrolling: {file_size: 5KiB}", 3000, 900, false, 4},
		{partitionedParquet, 3000, 900, false, 4},
		{"format: {type: avro, codec: deflate, block_size: 600}\nrolling: {file_size: 6KiB}", 3000, 900, false, 4},
		{"format: json\nrolling: {file_size: 12MiB}", 120000, 40000, true, 300},
	}
	for i, c := range cases {
		t.Run(strings.SplitN(c.options, "\n", 2)[0], func(t *testing.T) {
			rows := bids(c.rows)
			rng := rand.New(rand.NewPCG(1, 2))
			prefix := "run" + string(rune('a'+i))
			ref := filepath.Join(t.TempDir(), "ref")
			if c.onS3 {
				ref = "s3://" + bucket + "/ref" + prefix
			}
			l := &dirLife{t: t, s: newDirSink(t, ref, c.options, false, nil), rows: rows, every: c.every}
			l.run(rng, len(rows))
			l.finish()
			var want map[string][]byte
			if c.onS3 {
				want = map[string][]byte{}
				for k, v := range srv.Objects(t, bucket, "ref"+prefix+"/") {
					want[strings.TrimPrefix(k, "ref"+prefix+"/")] = v
				}
			} else {
				want = tree(t, ref)
			}

			out := "s3://" + bucket + "/" + prefix
			var state []byte
			next, lives := 0, 0
			for done := false; !done; lives++ {
				l := &dirLife{t: t, s: newDirSink(t, out, c.options, true, state), rows: rows, next: next, every: c.every}
				l.run(rng, min(len(rows), l.next+rng.IntN(c.life)))
				if l.next == len(rows) && rng.IntN(2) == 0 {
					l.finish()
					done = true
					continue
				}
				// Every object listed is whole: a part of the run without
				// a crash, byte for byte, or a hidden tail or spill.
				for k, v := range srv.Objects(t, bucket, prefix+"/") {
					if w, ok := want[strings.TrimPrefix(k, prefix+"/")]; !isHidden(k) && (!ok || !bytes.Equal(v, w)) {
						t.Fatalf("life %d: %s is listed (%d bytes), and no run without a crash writes it so", lives, k, len(v))
					}
				}
				crashS3(t, l.s)
				if len(l.states) > 0 {
					state, next = l.states[len(l.states)-1], l.covers[len(l.covers)-1]
				}
			}
			got := map[string][]byte{}
			for k, v := range srv.Objects(t, bucket, prefix+"/") {
				got[strings.TrimPrefix(k, prefix+"/")] = v
			}
			t.Logf("%d lives, %d objects", lives, len(got))
			sameTree(t, got, want)
		})
	}
}

// TestS3SinkErrors: wrong credentials fail Open at once with what to
// set, without the secret.
func TestS3SinkErrors(t *testing.T) {
	_, bucket := s3Out(t)
	const secret = "not-the-right-secret-4711"
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	sink, err := buildAny(t, "path: s3://"+bucket+"/out\nformat: parquet")
	if err != nil {
		t.Fatal(err)
	}
	s := sink.(*DirSink)
	if err := s.Bind(connector.SinkInput{Schema: bidSchema, Mode: connector.Append}); err != nil {
		t.Fatal(err)
	}
	err = s.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") || strings.Contains(err.Error(), secret) {
		t.Fatalf("open with a wrong secret: %v, want the credentials named and the secret not", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("close after a failed open: %v", err)
	}
}

// TestS3SinkOutage: the server goes away while a checkpoint uploads the
// parts' tails; the sink retries until it is back, and the objects end
// as a run without the outage writes them.
func TestS3SinkOutage(t *testing.T) {
	srv, bucket := s3Out(t)
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	proxy.Up()
	const options = "format: {type: parquet, row_group_size: 40}\nrolling: {file_size: 5KiB}"
	rows := bids(3000)
	ref := filepath.Join(t.TempDir(), "ref")
	l := &dirLife{t: t, s: newDirSink(t, ref, options, false, nil), rows: rows}
	l.run(rand.New(rand.NewPCG(3, 4)), len(rows))
	l.finish()

	out := "s3://" + bucket + "/out\ns3: {endpoint: \"http://" + proxy.Addr() + "\"}"
	l = &dirLife{t: t, s: newDirSink(t, out, options, true, nil), rows: rows}
	rng := rand.New(rand.NewPCG(3, 4))
	l.run(rng, 1500)
	proxy.Down()
	done := make(chan error, 1)
	go func() {
		_, err := l.s.Snapshot(context.Background())
		done <- err
	}()
	proxy.WaitRefused(t, 2)
	proxy.Up()
	if err := <-done; err != nil {
		t.Fatalf("snapshot through an outage: %v", err)
	}
	l.run(rng, len(rows))
	l.finish()
	got := map[string][]byte{}
	for k, v := range srv.Objects(t, bucket, "out/") {
		got[strings.TrimPrefix(k, "out/")] = v
	}
	t.Logf("%d connections turned away during the outage", proxy.Refused())
	sameTree(t, got, tree(t, ref))
}
