package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/etld/etld/internal/s3conf"
)

// Object storage behind the directory sink: path s3://bucket/prefix.
//
// A part is a multipart upload started for its final key: S3 lists no
// object under that key until CompleteMultipartUpload, which makes the
// whole part visible at once, so no reader ever sees a torn object.
// The sink's bytes are cut into pieces of partBytes, each uploaded as
// the upload's next part as soon as it is full. A checkpoint cannot
// upload what is left as a part (every part but the last must hold 5 MiB
// or more), so it stores it as a small hidden object beside the part,
// the tail (.part-00007.parquet.inprogress.tail-3), and the checkpoint
// names the upload, its parts (number, ETag, size) and the tail. A
// restore reads the tail back and goes on uploading; finishing a part
// uploads its last piece; the checkpoint's commit completes the upload
// with the parts the checkpoint named, so that parts a dead life
// uploaded after the checkpoint are left out.
//
// A restored part never uploads under a part number the dead life may
// have used: S3 would replace that part's bytes, and the ETag a
// checkpoint holds would no longer match. It asks the server for the
// parts the upload has and numbers its next part after the highest.
//
// Uploads no checkpoint names (a part begun after the last one) are
// aborted by Open, as a disk's stray in-progress files are deleted.

// partBytes is the size of an upload's parts but the last (S3 wants
// 5 MiB or more); a variable for tests.
var partBytes = 8 << 20

// requestTimeout bounds one request to the server.
const requestTimeout = 2 * time.Minute

// s3Target is the sink's object storage, from New: Open connects.
type s3Target struct {
	loc  s3conf.Location
	conf s3conf.Config
}

func newS3Target(p string, conf s3conf.Config) (*s3Target, error) {
	loc, err := s3conf.Parse(p)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(loc.Key, "*?[") {
		return nil, fmt.Errorf("%q: a sink's path names a prefix, not a glob", p)
	}
	loc.Key = strings.Trim(loc.Key, "/")
	if _, err := conf.Resolve(nil); err != nil {
		return nil, err
	}
	return &s3Target{loc: loc, conf: conf}, nil
}

// open connects and checks the bucket.
func (t *s3Target) open(ctx context.Context, logger *slog.Logger) (*s3Store, error) {
	r, err := t.conf.Resolve(nil)
	if err != nil {
		return nil, err
	}
	c, err := r.Client()
	if err != nil {
		return nil, err
	}
	err = s3conf.Retry(ctx, logger, "file sink: connect to "+t.loc.String(), func(ctx context.Context) error {
		return s3conf.Check(ctx, c, t.loc.Bucket)
	})
	if err != nil {
		return nil, err
	}
	prefix := t.loc.Key
	if prefix != "" {
		prefix += "/"
	}
	return &s3Store{c: c, bucket: t.loc.Bucket, prefix: prefix, root: t.loc.String(), kept: map[string]bool{}, logger: logger}, nil
}

// s3Store is a partStore on object storage.
type s3Store struct {
	c      *minio.Core
	bucket string
	prefix string
	root   string
	// kept are the uploads a restore resumed: remove aborts the others.
	kept   map[string]bool
	logger *slog.Logger
}

// do runs one request, retried on s3conf.Backoff's schedule, each try
// bounded by requestTimeout; what names it in the log.
func (s *s3Store) do(ctx context.Context, what string, op func(ctx context.Context) error) error {
	return s3conf.Retry(context.WithoutCancel(ctx), s.logger, "file sink: "+what, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		return op(ctx)
	})
}

// uploadState is a part's upload in a checkpoint.
type uploadState struct {
	ID       string     `json:"id"`
	Parts    []partInfo `json:"parts,omitempty"`
	Tail     string     `json:"tail,omitempty"`
	TailSize int64      `json:"tail_size,omitempty"`
}

type partInfo struct {
	N    int    `json:"n"`
	ETag string `json:"etag"`
	Size int64  `json:"size"`
}

func (s *s3Store) key(name string) string { return s.prefix + name }

func (s *s3Store) abs(name string) string { return s.root + "/" + name }

func (s *s3Store) explain(err error, name string) error {
	return s3conf.Explain(err, s.bucket, s.key(name))
}

// finalOf is the final name of in-progress name: its upload's key.
func finalOf(name string) string {
	dir, base := path.Split(name)
	return dir + strings.TrimSuffix(strings.TrimPrefix(base, "."), partSuffix)
}

// s3Part is a part being uploaded.
type s3Part struct {
	st     *s3Store
	name   string // in progress, for tails and errors
	key    string // final
	id     string
	parts  []partInfo
	next   int
	buf    []byte
	tails  int
	failed error
}

func (s *s3Store) createPart(ctx context.Context, name string) (partFile, error) {
	key := s.key(finalOf(name))
	var id string
	err := s.do(ctx, "start the upload of "+s.abs(finalOf(name)), func(ctx context.Context) error {
		var err error
		id, err = s.c.NewMultipartUpload(ctx, s.bucket, key, minio.PutObjectOptions{})
		return s.explain(err, finalOf(name))
	})
	if err != nil {
		return nil, err
	}
	s.kept[id] = true
	return &s3Part{st: s, name: name, key: key, id: id, next: 1}, nil
}

func (s *s3Store) resumePart(ctx context.Context, name string, size int64, upload string) (partFile, error) {
	var u uploadState
	if err := json.Unmarshal([]byte(upload), &u); err != nil || u.ID == "" {
		return nil, fmt.Errorf("%s: the checkpoint names no upload of the part (%q): it was taken writing to a disk", s.abs(name), upload)
	}
	p := &s3Part{st: s, name: name, key: s.key(finalOf(name)), id: u.ID, parts: u.Parts, next: 1}
	var total int64
	for _, pi := range u.Parts {
		total += pi.Size
		p.next = max(p.next, pi.N+1)
	}
	if u.Tail != "" {
		data, err := s.read(ctx, u.Tail)
		if err != nil {
			return nil, err
		}
		if int64(len(data)) != u.TailSize {
			return nil, fmt.Errorf("%s holds %d bytes, the checkpoint counted %d", s.abs(u.Tail), len(data), u.TailSize)
		}
		p.buf = data
		total += u.TailSize
		if n, ok := tailNum(u.Tail); ok {
			p.tails = n + 1
		}
	}
	if total != size {
		return nil, fmt.Errorf("%s: the checkpoint's upload holds %d bytes, and it counted %d", s.abs(name), total, size)
	}
	// Number the next part after every part the upload has, those a dead
	// life uploaded after the checkpoint too.
	marker := 0
	for {
		var res minio.ListObjectPartsResult
		var gone bool
		err := s.do(ctx, "list the parts of "+s.abs(finalOf(name)), func(ctx context.Context) error {
			var err error
			res, err = s.c.ListObjectParts(ctx, s.bucket, p.key, p.id, marker, 1000)
			if gone = s3conf.IsNotFound(err); gone {
				return nil
			}
			return s.explain(err, finalOf(name))
		})
		if gone {
			return nil, fmt.Errorf("the upload of %s that the checkpoint names is gone (aborted, or expired by a lifecycle rule): the part cannot be completed; to start afresh, remove the output and reset the pipeline's state (etld state reset)", s.abs(finalOf(name)))
		}
		if err != nil {
			return nil, err
		}
		for _, op := range res.ObjectParts {
			p.next = max(p.next, op.PartNumber+1)
		}
		if !res.IsTruncated || res.NextPartNumberMarker <= marker {
			break
		}
		marker = res.NextPartNumberMarker
	}
	s.kept[p.id] = true
	return p, nil
}

func tailNum(name string) (int, bool) {
	i := strings.LastIndex(name, ".tail-")
	if i < 0 {
		return 0, false
	}
	var n int
	_, err := fmt.Sscanf(name[i+len(".tail-"):], "%d", &n)
	return n, err == nil
}

// Write uploads every full piece.
func (p *s3Part) Write(b []byte) (int, error) {
	if p.failed != nil {
		return 0, p.failed
	}
	p.buf = append(p.buf, b...)
	for len(p.buf) >= partBytes {
		if err := p.upload(p.buf[:partBytes]); err != nil {
			p.buf = p.buf[:len(p.buf)-len(b)]
			return 0, err
		}
		p.buf = p.buf[:copy(p.buf, p.buf[partBytes:])]
	}
	return len(b), nil
}

// upload sends data as the upload's next part.
func (p *s3Part) upload(data []byte) error {
	n := p.next
	if n > 10000 {
		return fmt.Errorf("%s: the upload has used all 10000 part numbers S3 allows; set rolling.file_size lower", p.st.abs(p.name))
	}
	var op minio.ObjectPart
	err := p.st.do(context.Background(), fmt.Sprintf("upload part %d of %s", n, p.st.abs(finalOf(p.name))), func(ctx context.Context) error {
		var err error
		op, err = p.st.c.PutObjectPart(ctx, p.st.bucket, p.key, p.id, n, bytes.NewReader(data), int64(len(data)), minio.PutObjectPartOptions{})
		return p.st.explain(err, finalOf(p.name))
	})
	if err != nil {
		return err
	}
	p.next++
	p.parts = append(p.parts, partInfo{N: n, ETag: op.ETag, Size: int64(len(data))})
	return nil
}

// Sync: the bytes are durable at the checkpoint (the tail), not before.
func (p *s3Part) Sync() error { return nil }

// Close drops what was not uploaded: a later life resumes from a
// checkpoint, or the upload is aborted.
func (p *s3Part) Close() error {
	p.buf = nil
	return nil
}

func (s *s3Store) checkpoint(ctx context.Context, f partFile) (string, error) {
	p := f.(*s3Part)
	u := uploadState{ID: p.id, Parts: slices.Clone(p.parts)}
	if len(p.buf) > 0 {
		u.Tail = fmt.Sprintf("%s.tail-%d", p.name, p.tails)
		p.tails++
		if err := s.put(ctx, u.Tail, p.buf); err != nil {
			return "", err
		}
		u.TailSize = int64(len(p.buf))
	}
	out, err := json.Marshal(u)
	return string(out), err
}

func (s *s3Store) finish(ctx context.Context, f partFile) (string, error) {
	p := f.(*s3Part)
	if len(p.buf) > 0 || len(p.parts) == 0 {
		if err := p.upload(p.buf); err != nil {
			return "", err
		}
	}
	p.buf = nil
	out, err := json.Marshal(uploadState{ID: p.id, Parts: p.parts})
	return string(out), err
}

func (s *s3Store) keeps(upload string) []string {
	var u uploadState
	if json.Unmarshal([]byte(upload), &u) != nil || u.Tail == "" {
		return nil
	}
	return []string{u.Tail}
}

// publish completes the upload with the parts the checkpoint named; an
// upload already completed (an earlier commit of the same checkpoint)
// is found by its object.
func (s *s3Store) publish(ctx context.Context, from, to, upload string) error {
	var u uploadState
	if err := json.Unmarshal([]byte(upload), &u); err != nil || u.ID == "" {
		return fmt.Errorf("%s: the checkpoint names no upload of the part (%q)", s.abs(from), upload)
	}
	parts := make([]minio.CompletePart, len(u.Parts))
	for i, pi := range u.Parts {
		parts[i] = minio.CompletePart{PartNumber: pi.N, ETag: pi.ETag}
	}
	var size int64
	for _, pi := range u.Parts {
		size += pi.Size
	}
	done := false
	err := s.do(ctx, "complete the upload of "+s.abs(to), func(ctx context.Context) error {
		_, err := s.c.CompleteMultipartUpload(ctx, s.bucket, s.key(to), u.ID, parts, minio.PutObjectOptions{})
		if err == nil || !s3conf.IsNotFound(err) {
			done = err == nil
			return s.explain(err, to)
		}
		info, err := s.c.StatObject(ctx, s.bucket, s.key(to), minio.StatObjectOptions{})
		if err == nil {
			done = info.Size == size
			return nil
		}
		if s3conf.IsNotFound(err) {
			return nil
		}
		return s.explain(err, to)
	})
	if err != nil || done {
		return err
	}
	return fmt.Errorf("the upload of %s that the checkpoint names is gone, and the object is not there: the part is lost; to start afresh, remove the output and reset the pipeline's state (etld state reset)", s.abs(to))
}

// s3File is a small hidden object (a spill), put whole when synced.
type s3File struct {
	st   *s3Store
	name string
	buf  bytes.Buffer
	ctx  context.Context
}

func (s *s3Store) create(ctx context.Context, name string) (partFile, error) {
	return &s3File{st: s, name: name, ctx: ctx}, nil
}

func (f *s3File) Write(b []byte) (int, error) { return f.buf.Write(b) }
func (f *s3File) Sync() error                 { return f.st.put(f.ctx, f.name, f.buf.Bytes()) }
func (f *s3File) Close() error                { return nil }

func (s *s3Store) put(ctx context.Context, name string, data []byte) error {
	return s.do(ctx, "put "+s.abs(name), func(ctx context.Context) error {
		_, err := s.c.PutObject(ctx, s.bucket, s.key(name), bytes.NewReader(data), int64(len(data)), "", "", minio.PutObjectOptions{})
		return s.explain(err, name)
	})
}

func (s *s3Store) read(ctx context.Context, name string) ([]byte, error) {
	var data []byte
	err := s.do(ctx, "read "+s.abs(name), func(ctx context.Context) error {
		body, _, _, err := s.c.GetObject(ctx, s.bucket, s.key(name), minio.GetObjectOptions{})
		if err != nil {
			return s.explain(err, name)
		}
		defer body.Close()
		data, err = io.ReadAll(body)
		return s.explain(err, name)
	})
	return data, err
}

func (s *s3Store) touch(ctx context.Context, name string) error { return s.put(ctx, name, nil) }

// remove deletes object name; for an in-progress name, it aborts the
// uploads of its part that no restore resumed.
func (s *s3Store) remove(ctx context.Context, name string) error {
	if !strings.HasSuffix(name, partSuffix) {
		return s.do(ctx, "remove "+s.abs(name), func(ctx context.Context) error {
			err := s.c.RemoveObject(ctx, s.bucket, s.key(name), minio.RemoveObjectOptions{})
			if err != nil && !s3conf.IsNotFound(err) {
				return s.explain(err, name)
			}
			return nil
		})
	}
	key := s.key(finalOf(name))
	ups, err := s.uploads(ctx, key)
	if err != nil {
		return err
	}
	for _, u := range ups {
		if u.Key != key || s.kept[u.UploadID] {
			continue
		}
		err := s.do(ctx, "abort an upload of "+s.abs(finalOf(name)), func(ctx context.Context) error {
			err := s.c.AbortMultipartUpload(ctx, s.bucket, key, u.UploadID)
			if err != nil && !s3conf.IsNotFound(err) {
				return s.explain(err, finalOf(name))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *s3Store) uploads(ctx context.Context, prefix string) ([]minio.ObjectMultipartInfo, error) {
	var out []minio.ObjectMultipartInfo
	keyMarker, idMarker := "", ""
	for {
		var res minio.ListMultipartUploadsResult
		err := s.do(ctx, "list the uploads under "+s.root, func(ctx context.Context) error {
			var err error
			res, err = s.c.ListMultipartUploads(ctx, s.bucket, prefix, keyMarker, idMarker, "", 1000)
			return s3conf.Explain(err, s.bucket, prefix)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Uploads...)
		if !res.IsTruncated || (res.NextKeyMarker == keyMarker && res.NextUploadIDMarker == idMarker) {
			return out, nil
		}
		keyMarker, idMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

func (s *s3Store) sync() error { return nil }

// walk lists the objects under the prefix, and each part with an upload
// under its in-progress name, in Hive partition "directories"
// (name=value) and the prefix itself.
func (s *s3Store) walk(ctx context.Context, keep func(name string) bool) ([]string, error) {
	inDir := func(rel string) bool {
		dir := path.Dir(rel)
		if dir == "." {
			return true
		}
		for _, d := range strings.Split(dir, "/") {
			if !strings.Contains(d, "=") {
				return false
			}
		}
		return true
	}
	var out []string
	err := s.do(ctx, "list "+s.root, func(ctx context.Context) error {
		out = out[:0]
		for o := range s.c.Client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
			if o.Err != nil {
				return s3conf.Explain(o.Err, s.bucket, s.prefix)
			}
			rel := strings.TrimPrefix(o.Key, s.prefix)
			if inDir(rel) && keep(rel) {
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ups, err := s.uploads(ctx, s.prefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, u := range ups {
		rel := strings.TrimPrefix(u.Key, s.prefix)
		dir, base := path.Split(rel)
		name := dir + "." + base + partSuffix
		if !seen[name] && inDir(rel) && keep(name) {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

var (
	_ partStore = (*s3Store)(nil)
	_ partStore = (*diskStore)(nil)
)
