package elasticsearch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
)

// roundTripper is http.RoundTripper; unit tests put a fake one in Sink.
type roundTripper = http.RoundTripper

// newClient builds the client from the options. The client's own retries
// are off: the sink retries with its backoff, item by item.
func (s *Sink) newClient() (*elasticsearch.Client, error) {
	transport := s.transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: s.cfg.connectTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = s.cfg.connectTimeout
		t.ResponseHeaderTimeout = s.cfg.socketTimeout
		t.MaxIdleConnsPerHost = max(s.cfg.parallelism, 2)
		if s.cfg.caFile != "" {
			pem, err := os.ReadFile(s.cfg.caFile)
			if err != nil {
				return nil, fmt.Errorf("ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("ca_file %s: no PEM certificate in it", s.cfg.caFile)
			}
			t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		transport = t
	}
	client, err := elasticsearch.NewClient(elasticsearch.Config{
		Addresses:    s.cfg.hosts,
		Username:     s.cfg.username,
		Password:     s.cfg.password,
		APIKey:       s.cfg.apiKey,
		Transport:    transport,
		DisableRetry: true,
		// Bodies are read to the end or closed early on errors; draining
		// keeps connections reusable.
		AutoDrainBody: true,
	})
	if err != nil {
		return nil, fmt.Errorf("elasticsearch client: %w", err)
	}
	return client, nil
}

// ping asks for the cluster's health: the test distribution answers GET /
// with 405, and health needs no index.
func (s *Sink) ping(ctx context.Context) error {
	res, err := s.client.Cluster.Health(s.client.Cluster.Health.WithContext(ctx))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		return statusError(res.StatusCode, res.Body)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	return nil
}
