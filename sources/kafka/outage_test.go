package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
)

// TestBrokerUnavailableAtStart starts the source while its broker cannot
// be reached: Open succeeds, Read waits without an error, a warning says
// what is retried, and once the broker answers every row arrives.
func TestBrokerUnavailableAtStart(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			topic := testenv.KafkaTopic(t, addr, 2)
			produce(t, addr, topic, msg(0, "", `{"id":1}`), msg(1, "", `{"id":2}`), msg(1, "", `{"id":3}`))
			// A proxy in front of the bootstrap address, down at first. Kafka
			// clients use that address only for their first metadata request:
			// the broker then advertises its own listener, which they dial
			// directly. So the proxy models a broker that is away when the
			// source starts, which is the case under test; it cannot cut
			// connections made after that.
			px := testenv.NewProxy(t, addr)
			logs := &testenv.Buffer{}
			ts := testSource{
				schema: testenv.Schema(t, "id BIGINT"),
				logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
			}
			cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{px.Addr()}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
			if group {
				cfg.GroupID = testenv.UniqueName(t, "g")
			}
			s := ts.open(t, cfg, nil)

			testenv.Eventually(t, 30*time.Second, "a retry warning and a second connection attempt", func() error {
				if n := px.Refused(); n < 2 {
					return fmt.Errorf("%d connection attempts", n)
				}
				if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "will retry") || !strings.Contains(l, px.Addr()) {
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

			px.Up()
			got := printed(conntest.ReadAll(t, s, 100))
			if want := []string{"+I[1]", "+I[2]", "+I[3]"}; !reflect.DeepEqual(got, want) {
				t.Errorf("read %v, want %v", got, want)
			}
			if l := logs.String(); strings.Contains(l, "level=ERROR") {
				t.Errorf("an outage at start logged an error:\n%s", l)
			}
		})
	}
}
