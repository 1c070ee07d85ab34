package testenv

import (
	"context"
	"io"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The S3 server's variables (testenv/s3.sh: Versity's S3 gateway over a
// posix directory).
const (
	EnvS3Endpoint  = "ETLD_TEST_S3_ENDPOINT"
	EnvS3AccessKey = "ETLD_TEST_S3_ACCESS_KEY"
	EnvS3SecretKey = "ETLD_TEST_S3_SECRET_KEY"
	EnvS3Region    = "ETLD_TEST_S3_REGION"
)

// S3Server is the test S3 server: its URL and root user.
type S3Server struct {
	Endpoint, AccessKey, SecretKey, Region string
}

// S3 returns the test S3 server, or skips/fails t when
// ETLD_TEST_S3_ENDPOINT is unset.
func S3(t testing.TB) S3Server {
	t.Helper()
	s := S3Server{Endpoint: lookup(t, EnvS3Endpoint, "S3 server")}
	s.AccessKey = lookup(t, EnvS3AccessKey, "S3 server's access key")
	s.SecretKey = lookup(t, EnvS3SecretKey, "S3 server's secret key")
	s.Region = lookup(t, EnvS3Region, "S3 server's region")
	return s
}

// Setenv points the AWS environment variables at the server for t.
func (s S3Server) Setenv(t testing.TB) {
	t.Setenv("AWS_ENDPOINT_URL_S3", s.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	t.Setenv("AWS_REGION", s.Region)
}

// Client is a client of the server as its root user.
func (s S3Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region,
		Secure: u.Scheme == "https", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Bucket creates a bucket of a unique name and removes it, with its
// objects and uploads, when t ends.
func (s S3Server) Bucket(t testing.TB) string {
	t.Helper()
	name := strings.ReplaceAll(strings.ToLower(UniqueName(t, "etld")), "_", "-")
	name = strings.Trim(name[:min(len(name), 63)], "-")
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for u := range c.ListIncompleteUploads(ctx, name, "", true) {
			if u.Err == nil {
				_ = c.RemoveIncompleteUpload(ctx, name, u.Key)
			}
		}
		for o := range c.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err == nil {
				_ = c.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{})
			}
		}
		_ = c.RemoveBucket(ctx, name)
	})
	return name
}

// Objects reads every object of bucket under prefix, by key.
func (s S3Server) Objects(t testing.TB, bucket, prefix string) map[string][]byte {
	t.Helper()
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := map[string][]byte{}
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s/%s: %v", bucket, prefix, o.Err)
		}
		obj, err := c.GetObject(ctx, bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(obj)
		obj.Close()
		if err != nil {
			t.Fatalf("read %s: %v", o.Key, err)
		}
		out[o.Key] = data
	}
	return out
}

// Keys lists the keys of bucket under prefix, in order.
func (s S3Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var keys []string
	for o := range s.Client(t).ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s/%s: %v", bucket, prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	sort.Strings(keys)
	return keys
}

// Put writes object key of bucket.
func (s S3Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client(t).PutObject(ctx, bucket, key, strings.NewReader(string(data)), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}
