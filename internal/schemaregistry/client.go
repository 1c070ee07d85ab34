// Package schemaregistry is a client of a schema registry's Confluent API
// (Confluent Schema Registry, and the same API served by Apicurio Registry
// under /apis/ccompat/v7, Redpanda and Karapace): schemas by id, cached,
// and a subject's schema registered or looked up. It knows nothing of
// Avro or Protobuf; the formats do.
//
// Every call retries what may pass (a refused connection, a timeout, an
// HTTP 5xx or 429) with backoff until its context ends, and returns at once
// what cannot (any other 4xx, with the registry's own message). An error
// after retrying wraps ErrUnavailable, so that a caller can tell the
// registry's absence from a bad schema or a bad record.
package schemaregistry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/etld/etld/internal/retry"
)

// ErrUnavailable is wrapped by the error of a call that could not reach the
// registry, or that the registry could not answer, within its context.
var ErrUnavailable = errors.New("the schema registry is unavailable")

// Config says how to reach a registry.
type Config struct {
	// URL is the API's base, such as http://registry:8081 or
	// http://apicurio:8080/apis/ccompat/v7.
	URL string
	// BasicAuthUserInfo is "user:password" for HTTP basic authentication
	// (Confluent's basic.auth.user.info); BearerToken a token for bearer
	// authentication. At most one is set.
	BasicAuthUserInfo string
	BearerToken       string
	// RequestTimeout bounds one HTTP request (default 10s).
	RequestTimeout time.Duration
	// Backoff is the wait between tries (default 100ms doubling to 2s).
	Backoff retry.Backoff
	// Logger gets a warning per retry; nil logs nothing.
	Logger *slog.Logger
	// Transport is the HTTP transport (default: a transport of its own).
	Transport http.RoundTripper
}

// Schema is a schema as the registry holds it.
type Schema struct {
	// Type is AVRO, PROTOBUF or JSON; the registry leaves it out for AVRO.
	Type       string      `json:"schemaType,omitempty"`
	Text       string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
}

// Reference names another subject's schema that a schema imports.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Client talks to one registry. It is safe for concurrent use.
type Client struct {
	base   string
	auth   string // the Authorization header, or ""
	http   *http.Client
	cfg    Config
	mu     sync.Mutex
	byID   map[int]Schema
	logger *slog.Logger
}

// New returns a client of the registry at cfg.URL. It makes no request.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url: want the registry's http:// or https:// address, such as http://registry:8081")
	}
	if u.User != nil {
		return nil, fmt.Errorf("url: carries credentials; give them in basic_auth_user_info instead, from a ${VAR}")
	}
	c := &Client{base: strings.TrimRight(cfg.URL, "/"), cfg: cfg, byID: map[int]Schema{}, logger: cfg.Logger}
	switch {
	case cfg.BasicAuthUserInfo != "" && cfg.BearerToken != "":
		return nil, errors.New("basic_auth_user_info and bearer_token: set one of them, not both")
	case cfg.BasicAuthUserInfo != "":
		if !strings.Contains(cfg.BasicAuthUserInfo, ":") {
			return nil, errors.New("basic_auth_user_info: want user:password")
		}
		c.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.BasicAuthUserInfo))
	case cfg.BearerToken != "":
		c.auth = "Bearer " + cfg.BearerToken
	}
	if c.cfg.RequestTimeout <= 0 {
		c.cfg.RequestTimeout = 10 * time.Second
	}
	if c.cfg.Backoff.Initial == 0 && c.cfg.Backoff.Max == 0 {
		c.cfg.Backoff.Initial, c.cfg.Backoff.Max = 100*time.Millisecond, 2*time.Second
	}
	tr := cfg.Transport
	if tr == nil {
		tr = &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	}
	c.http = &http.Client{Transport: tr}
	return c, nil
}

// URL returns the registry's base URL.
func (c *Client) URL() string { return c.base }

// SchemaByID returns the schema of a global id, from the cache after the
// first call: a schema never changes under its id.
func (c *Client) SchemaByID(ctx context.Context, id int) (Schema, error) {
	c.mu.Lock()
	s, ok := c.byID[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	if err := c.call(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), nil, &s); err != nil {
		return Schema{}, fmt.Errorf("schema id %d: %w", id, err)
	}
	c.mu.Lock()
	c.byID[id] = s
	c.mu.Unlock()
	return s, nil
}

// Register registers s under subject (a new version unless the subject
// has it already) and returns its id. The registry refuses a schema its
// compatibility rule forbids, with a *StatusError.
func (c *Client) Register(ctx context.Context, subject string, s Schema) (int, error) {
	var out struct {
		ID int `json:"id"`
	}
	if err := c.call(ctx, http.MethodPost, "/subjects/"+url.PathEscape(subject)+"/versions", s, &out); err != nil {
		return 0, fmt.Errorf("register the schema under subject %q: %w", subject, err)
	}
	c.remember(out.ID, s)
	return out.ID, nil
}

// Lookup returns the id of s under subject, which must have it: a
// *StatusError with code 404 when it does not.
func (c *Client) Lookup(ctx context.Context, subject string, s Schema) (int, error) {
	var out struct {
		ID int `json:"id"`
	}
	if err := c.call(ctx, http.MethodPost, "/subjects/"+url.PathEscape(subject), s, &out); err != nil {
		return 0, fmt.Errorf("look up the schema under subject %q: %w", subject, err)
	}
	c.remember(out.ID, s)
	return out.ID, nil
}

// Latest returns the newest version of subject's schema and its id.
func (c *Client) Latest(ctx context.Context, subject string) (Schema, int, error) {
	var out struct {
		Schema
		ID int `json:"id"`
	}
	if err := c.call(ctx, http.MethodGet, "/subjects/"+url.PathEscape(subject)+"/versions/latest", nil, &out); err != nil {
		return Schema{}, 0, fmt.Errorf("latest schema of subject %q: %w", subject, err)
	}
	return out.Schema, out.ID, nil
}

func (c *Client) remember(id int, s Schema) {
	c.mu.Lock()
	if _, ok := c.byID[id]; !ok {
		c.byID[id] = s
	}
	c.mu.Unlock()
}

// StatusError is an answer of the registry that retrying cannot change.
type StatusError struct {
	Status int // HTTP status
	Code   int // the registry's error_code, such as 40403 (schema not found)
	Msg    string
}

func (e *StatusError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("the registry answered HTTP %d, error %d: %s", e.Status, e.Code, e.Msg)
	}
	return fmt.Sprintf("the registry answered HTTP %d: %s", e.Status, e.Msg)
}

// passing reports whether the answer may change when asked again: the
// registry is overloaded or failing.
func (e *StatusError) passing() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout
}

// call makes one request, retried while it may pass, and decodes the
// answer into out.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	var last error
	err := retry.Do(ctx, c.cfg.Backoff, c.logger, "schema registry: "+method+" "+path, func(ctx context.Context) error {
		last = c.once(ctx, method, path, body, out)
		return last
	})
	if err == nil {
		return nil
	}
	var se *StatusError
	if errors.As(err, &se) && !se.passing() {
		return se
	}
	// The context ended while retrying: the last attempt says why.
	return fmt.Errorf("%w at %s: %v", ErrUnavailable, c.base, last)
}

// once makes one request; an error it marks retry.Permanent is final.
func (c *Client) once(ctx context.Context, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return retry.Permanent(err)
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		e := &StatusError{Status: res.StatusCode}
		var msg struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Message != "" {
			e.Code, e.Msg = msg.Code, msg.Message
		} else {
			e.Msg = strings.TrimSpace(string(data[:min(len(data), 300)]))
		}
		if e.passing() {
			return e
		}
		return retry.Permanent(e)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return retry.Permanent(fmt.Errorf("the registry's answer is not the JSON expected: %w", err))
	}
	return nil
}
