package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// proxy is a TCP proxy in front of the broker's bootstrap address. While
// down it accepts connections and closes them at once, as a host whose
// broker is not running would reset them; once up it forwards them.
//
// Kafka clients use the bootstrap address only for their first metadata
// request: the broker then advertises its own listener (127.0.0.1:9092),
// which they dial directly. So the proxy models a broker that is away when
// the source starts, which is the case under test; it cannot cut
// connections made after that.
type proxy struct {
	ln       net.Listener
	target   string
	up       atomic.Bool
	attempts atomic.Int64
	wg       sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.attempts.Add(1)
		if !p.up.Load() {
			c.Close()
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer c.Close()
			b, err := net.Dial("tcp", p.target)
			if err != nil {
				return
			}
			defer b.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
			<-done
		}()
	}
}

// syncBuffer is a log sink the source's goroutines and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBrokerUnavailableAtStart starts the source while its broker cannot
// be reached: Open succeeds, Read waits without an error, a warning says
// what is retried, and once the broker answers every row arrives.
func TestBrokerUnavailableAtStart(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			topic := createTopic(t, addr, 2)
			produce(t, addr, topic, msg(0, "", `{"id":1}`), msg(1, "", `{"id":2}`), msg(1, "", `{"id":3}`))
			px := startProxy(t, addr)
			logs := &syncBuffer{}
			ts := testSource{
				schema: schemaOf(t, "id", "BIGINT"),
				logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
			}
			cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{px.addr()}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
			if group {
				cfg.GroupID = testenv.UniqueName(t, "g")
			}
			s := ts.open(t, cfg, nil)

			testenv.Eventually(t, 30*time.Second, "a retry warning and a second connection attempt", func() error {
				if px.attempts.Load() < 2 {
					return fmt.Errorf("%d connection attempts", px.attempts.Load())
				}
				if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "will retry") || !strings.Contains(l, px.addr()) {
					return fmt.Errorf("logs so far:\n%s", l)
				}
				return nil
			})
			// Read waits: no rows, and no error but its context's.
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			b, err := s.Read(ctx, 10)
			cancel()
			if b != nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Read while the broker is away = %v, %v; want to wait until the deadline", b, err)
			}

			px.up.Store(true)
			got := printed(readAll(t, s))
			if want := []string{"+I[1]", "+I[2]", "+I[3]"}; !reflect.DeepEqual(got, want) {
				t.Errorf("read %v, want %v", got, want)
			}
			if l := logs.String(); strings.Contains(l, "level=ERROR") {
				t.Errorf("an outage at start logged an error:\n%s", l)
			}
		})
	}
}
