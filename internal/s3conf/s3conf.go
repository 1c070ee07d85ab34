// Package s3conf is the object storage configuration the file source and
// the file sink share: an s3://bucket/prefix path, the s3 option block
// beside the connector's own options (endpoint, region, credentials), and
// the usual AWS environment variables for what the block leaves out. It
// builds a minio-go client; the connectors never import each other, so
// this is where both find it.
//
// Credentials come from the s3 block (written as ${VAR}, so that the
// pipeline file holds no secret and the daemon redacts the value) or from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. The
// endpoint comes from the block, or AWS_ENDPOINT_URL_S3, or
// AWS_ENDPOINT_URL, or is AWS's own for the region (AWS_REGION, or
// AWS_DEFAULT_REGION, or us-east-1). No error or log line ever holds a
// secret: Config's secret fields print as ***.
package s3conf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/etld/etld/internal/retry"
)

// Scheme is the prefix of an object storage path.
const Scheme = "s3://"

// Config is the s3 option block.
type Config struct {
	// Endpoint is the server's URL (http://127.0.0.1:7070); AWS's own
	// for the region when empty.
	Endpoint string `yaml:"endpoint"`
	// Region is us-east-1 when neither it nor AWS_REGION is set.
	Region string `yaml:"region"`
	// AccessKeyID, SecretAccessKey and SessionToken are the credentials;
	// write them as ${VAR}.
	AccessKeyID     string `yaml:"access_key_id"`
	SecretAccessKey Secret `yaml:"secret_access_key"`
	SessionToken    Secret `yaml:"session_token"`
	// PathStyle asks for http://host/bucket/key URLs rather than
	// http://bucket.host/key; on by default for an endpoint that is not
	// AWS's (a local server has no per-bucket host names).
	PathStyle *bool `yaml:"path_style"`
}

// Secret is a string that prints as "***" whichever way it is printed.
type Secret string

const redacted = "***"

func (s Secret) String() string               { return redactedIf(s) }
func (s Secret) GoString() string             { return strconv.Quote(redactedIf(s)) }
func (s Secret) LogValue() slog.Value         { return slog.StringValue(redactedIf(s)) }
func (s Secret) MarshalText() ([]byte, error) { return []byte(redactedIf(s)), nil }

func redactedIf(s Secret) string {
	if s == "" {
		return ""
	}
	return redacted
}

// IsS3 reports whether path names object storage.
func IsS3(path string) bool { return strings.HasPrefix(path, Scheme) }

// Location is a parsed s3://bucket/prefix path.
type Location struct {
	Bucket string
	// Key is what follows the bucket, without a leading /: a prefix, a
	// key, or a glob of keys.
	Key string
}

// String is the path as the user wrote it.
func (l Location) String() string {
	if l.Key == "" {
		return Scheme + l.Bucket
	}
	return Scheme + l.Bucket + "/" + l.Key
}

// Parse reads an s3://bucket/key path.
func Parse(path string) (Location, error) {
	rest, ok := strings.CutPrefix(path, Scheme)
	if !ok {
		return Location{}, fmt.Errorf("%q is not an s3://bucket/prefix path", path)
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return Location{}, fmt.Errorf("%q names no bucket: write s3://bucket/prefix", path)
	}
	if strings.ContainsAny(bucket, "*?[") {
		return Location{}, fmt.Errorf("%q: the bucket name cannot be a glob", path)
	}
	return Location{Bucket: bucket, Key: key}, nil
}

// Resolved is the configuration with the environment's defaults applied.
type Resolved struct {
	Endpoint  *url.URL
	Region    string
	PathStyle bool
	creds     *credentials.Credentials
	anonymous bool
}

// Resolve applies the environment (getenv, os.Getenv when nil) to c.
func (c Config) Resolve(getenv func(string) string) (Resolved, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := Resolved{Region: firstOf(c.Region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"), "us-east-1")}
	endpoint := firstOf(c.Endpoint, getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"))
	aws := endpoint == ""
	if aws {
		endpoint = "https://s3." + r.Region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return r, fmt.Errorf("endpoint %q: want a URL such as http://127.0.0.1:7070 or https://s3.eu-west-1.amazonaws.com (no path)", endpoint)
	}
	r.Endpoint = u
	r.PathStyle = !aws
	if c.PathStyle != nil {
		r.PathStyle = *c.PathStyle
	}
	id, secret, token := c.AccessKeyID, string(c.SecretAccessKey), string(c.SessionToken)
	if id == "" && secret == "" {
		id, secret, token = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), firstOf(token, getenv("AWS_SESSION_TOKEN"))
	}
	switch {
	case id == "" && secret == "":
		r.anonymous = true
	case id == "" || secret == "":
		return r, errors.New("credentials: set both access_key_id and secret_access_key (as ${VAR}), or both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	default:
		r.creds = credentials.NewStaticV4(id, secret, token)
	}
	return r, nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Client builds a minio-go client for r. It makes no request.
func (r Resolved) Client() (*minio.Core, error) {
	opts := &minio.Options{
		Secure:       r.Endpoint.Scheme == "https",
		Region:       r.Region,
		BucketLookup: minio.BucketLookupDNS,
		// The connectors retry with their own backoff and say so; the
		// client's own retries would hide an unreachable server for
		// minutes.
		MaxRetries: 1,
		Transport:  transport(),
	}
	if r.PathStyle {
		opts.BucketLookup = minio.BucketLookupPath
	}
	if r.anonymous {
		opts.Creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	} else {
		opts.Creds = r.creds
	}
	c, err := minio.NewCore(r.Endpoint.Host, opts)
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", r.Endpoint.Redacted(), err)
	}
	return c, nil
}

func transport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32
	t.ResponseHeaderTimeout = 2 * time.Minute
	return t
}

// Check asks the server for the bucket: a wrong endpoint, wrong
// credentials or a missing bucket fail here with a clear error, before a
// pipeline starts its work. Errors from a server that does not answer are
// retried by the caller; a refusal is permanent.
func Check(ctx context.Context, c *minio.Core, bucket string) error {
	ok, err := c.BucketExists(ctx, bucket)
	if err != nil {
		return Explain(err, bucket, "")
	}
	if !ok {
		return retry.Permanent(fmt.Errorf("bucket %q does not exist at %s", bucket, c.EndpointURL().Redacted()))
	}
	return nil
}

// Explain turns a client error into one that says what to fix, marking a
// refusal (credentials, permissions, a missing bucket) permanent.
func Explain(err error, bucket, key string) error {
	if err == nil {
		return nil
	}
	what := Location{Bucket: bucket, Key: key}.String()
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.Code != "" {
		switch resp.Code {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken":
			return retry.Permanent(fmt.Errorf("%s: the server refused the credentials (%s: %s); check access_key_id and secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", what, resp.Code, resp.Message))
		case "NoSuchBucket":
			return retry.Permanent(fmt.Errorf("%s: bucket %q does not exist", what, bucket))
		}
		err := fmt.Errorf("%s: %s: %s", what, resp.Code, resp.Message)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			// The request itself is wrong: sending it again cannot help.
			return retry.Permanent(err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: the server does not answer: %w", what, err)
}

// IsNotFound reports an error for a key or an upload that does not exist.
func IsNotFound(err error) bool {
	resp := minio.ToErrorResponse(err)
	return resp.Code == "NoSuchKey" || resp.Code == "NoSuchUpload" || resp.StatusCode == http.StatusNotFound
}

// Backoff is the schedule of one request to the server: a server away
// for a while (a restart) is waited for about half a minute, then the
// error stops the pipeline, which restarts from its checkpoint.
var Backoff = retry.Backoff{Initial: 200 * time.Millisecond, Max: 5 * time.Second, Attempts: 9}

// Retry runs op on Backoff's schedule, logging each retry; an error op
// marks permanent (Explain marks refusals so) is returned at once.
func Retry(ctx context.Context, logger *slog.Logger, what string, op func(ctx context.Context) error) error {
	calls := 0
	err := retry.Do(ctx, Backoff, logger, what, func(ctx context.Context) error {
		calls++
		return op(ctx)
	})
	if err != nil && Backoff.Attempts > 0 && calls >= Backoff.Attempts && ctx.Err() == nil {
		return fmt.Errorf("%w (gave up after %d attempts)", err, calls)
	}
	return err
}
