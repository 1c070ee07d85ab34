package kafkaconf_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
)

var mechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

func saslConfig(addr, mechanism, user, password string) kafkaconf.Config {
	return kafkaconf.Config{
		Brokers:     []string{addr},
		ClientID:    "etld-sasl-test",
		DialTimeout: 10 * time.Second,
		SASL:        &kafkaconf.SASL{Mechanism: mechanism, Username: user, Password: kafkaconf.Secret(password)},
	}
}

// TestSASLWriteRead writes with a kafka-go Writer on Config.Transport and
// reads back with a Reader on Config.Dialer, through the broker's
// SASL_PLAINTEXT listener, once per mechanism. The topic is created
// through the same listener, so admin requests authenticate too.
func TestSASLWriteRead(t *testing.T) {
	addr, user, password := testenv.KafkaSASL(t)
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			ctx := testenv.Context(t, 90*time.Second)
			cfg := saslConfig(addr, mech, user, password)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			transport, err := cfg.Transport()
			if err != nil {
				t.Fatalf("Transport: %v", err)
			}
			defer transport.CloseIdleConnections()
			// Created over SASL: the admin requests authenticate too.
			topic := testenv.KafkaTopicVia(t, &kafka.Client{Addr: kafka.TCP(addr), Transport: transport, Timeout: 30 * time.Second}, 1)

			want := []kafka.Message{
				{Key: []byte("k1"), Value: []byte("over " + mech)},
				{Key: []byte("k2"), Value: []byte(`{"n":2}`)},
				{Key: nil, Value: []byte("third")},
			}
			w := &kafka.Writer{
				Addr:         kafka.TCP(addr),
				Topic:        topic,
				Transport:    transport,
				RequiredAcks: kafka.RequireAll,
				BatchTimeout: 5 * time.Millisecond,
			}
			if err := w.WriteMessages(ctx, want...); err != nil {
				t.Fatalf("WriteMessages: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Writer.Close: %v", err)
			}

			dialer, err := cfg.Dialer()
			if err != nil {
				t.Fatalf("Dialer: %v", err)
			}
			r := kafka.NewReader(kafka.ReaderConfig{
				Brokers:   cfg.Addrs(),
				Topic:     topic,
				Partition: 0,
				Dialer:    dialer,
				MaxBytes:  1 << 20,
				MaxWait:   100 * time.Millisecond,
			})
			defer r.Close()
			for i, w := range want {
				got, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("ReadMessage %d: %v", i, err)
				}
				if got.Offset != int64(i) || !bytes.Equal(got.Key, w.Key) || !bytes.Equal(got.Value, w.Value) {
					t.Errorf("message %d = offset %d key %q value %q; want offset %d key %q value %q",
						i, got.Offset, got.Key, got.Value, i, w.Key, w.Value)
				}
			}
		})
	}
}

// TestSASLWrongPassword: with a wrong password the Dialer, a Writer and an
// admin Client all fail with the broker's authentication error, and no
// error text holds the wrong password or the right one.
func TestSASLWrongPassword(t *testing.T) {
	addr, user, password := testenv.KafkaSASL(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	wrong := "wrong-pw-" + hex.EncodeToString(b[:])
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			ctx := testenv.Context(t, 60*time.Second)
			cfg := saslConfig(addr, mech, user, wrong)
			check := func(what string, err error) {
				t.Helper()
				if err == nil {
					t.Errorf("%s with a wrong password: no error", what)
					return
				}
				if !errors.Is(err, kafka.SASLAuthenticationFailed) {
					t.Errorf("%s: error %q (%T) is not kafka.SASLAuthenticationFailed", what, err, err)
				}
				for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
					if strings.Contains(text, wrong) || strings.Contains(text, password) {
						t.Errorf("%s: error text holds a password: %s", what, text)
					}
				}
				t.Logf("%s: %v", what, err)
			}

			dialer, err := cfg.Dialer()
			if err != nil {
				t.Fatalf("Dialer: %v", err)
			}
			conn, err := dialer.DialContext(ctx, "tcp", addr)
			if err == nil {
				conn.Close()
			}
			check("Dialer.DialContext", err)

			transport, err := cfg.Transport()
			if err != nil {
				t.Fatalf("Transport: %v", err)
			}
			defer transport.CloseIdleConnections()
			w := &kafka.Writer{
				Addr:         kafka.TCP(addr),
				Topic:        testenv.UniqueName(t, "never"),
				Transport:    transport,
				RequiredAcks: kafka.RequireAll,
				MaxAttempts:  1,
			}
			err = w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
			w.Close()
			check("Writer.WriteMessages", err)

			client := &kafka.Client{Addr: kafka.TCP(addr), Transport: transport, Timeout: 20 * time.Second}
			_, err = client.Metadata(ctx, &kafka.MetadataRequest{})
			check("Client.Metadata", err)
		})
	}
}

// TestSASLListenerNeedsAuth: a client without SASL gets nothing from the
// SASL listener, so the successes above did authenticate.
func TestSASLListenerNeedsAuth(t *testing.T) {
	addr, _, _ := testenv.KafkaSASL(t)
	ctx := testenv.Context(t, 30*time.Second)
	cfg := kafkaconf.Config{Brokers: []string{addr}, DialTimeout: 5 * time.Second}
	transport, err := cfg.Transport()
	if err != nil {
		t.Fatal(err)
	}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addr), Transport: transport, Timeout: 5 * time.Second}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{})
	if err == nil {
		t.Fatalf("metadata without SASL from %s: %+v; want an error", addr, md)
	}
	t.Logf("without SASL: %v", err)
}
