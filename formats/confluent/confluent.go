// Package confluent is what the registry-framed formats (avro-confluent,
// debezium-avro-confluent, protobuf-confluent) share: the registry's
// options, its calls bounded in time, Confluent's framing (a zero byte and
// the schema id in four bytes big-endian) and the writer's subject,
// registered once.
package confluent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etld/etld/internal/schemaregistry"
	"github.com/etld/etld/pipeline/connector"
)

// Options are the registry's options, as each format's YAML spells them
// (url, subject, auto_register, basic_auth_user_info, bearer_token,
// timeout).
type Options struct {
	URL               string
	Subject           string
	AutoRegister      *bool
	BasicAuthUserInfo string
	BearerToken       string
	Timeout           time.Duration
}

// Registry is a registry client whose every call is bounded by the
// timeout option (default 30s), retries included.
type Registry struct {
	Client  *schemaregistry.Client
	timeout time.Duration
}

// New returns the registry o names; it makes no request.
func New(o Options) (*Registry, error) {
	c, err := schemaregistry.New(schemaregistry.Config{URL: o.URL, BasicAuthUserInfo: o.BasicAuthUserInfo, BearerToken: o.BearerToken})
	if err != nil {
		return nil, connector.Errorf("url", "%v", err)
	}
	switch {
	case o.Timeout < 0:
		return nil, connector.Errorf("timeout", "must be positive, such as 30s")
	case o.Timeout == 0:
		o.Timeout = 30 * time.Second
	}
	return &Registry{Client: c, timeout: o.Timeout}, nil
}

// Call runs f within the timeout. An error after retrying is a
// *connector.UnavailableError, which fails the run rather than the
// record.
func (g *Registry) Call(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	err := f(ctx)
	if errors.Is(err, schemaregistry.ErrUnavailable) {
		return &connector.UnavailableError{Err: err}
	}
	return err
}

// SchemaByID looks a schema up by id (cached by the client). Only an
// *connector.UnavailableError is worth asking again for.
func (g *Registry) SchemaByID(id int) (schemaregistry.Schema, error) {
	var s schemaregistry.Schema
	err := g.Call(func(ctx context.Context) (err error) {
		s, err = g.Client.SchemaByID(ctx, id)
		return err
	})
	return s, err
}

// Magic is the first byte of Confluent's wire format.
const Magic = 0

// FrameID reads the schema id of a framed record; the datum starts at
// byte 5.
func FrameID(rec []byte) (int, error) {
	if len(rec) < 5 {
		return 0, fmt.Errorf("a record of %d bytes is too short for the schema registry's framing (a zero byte and a 4-byte schema id)", len(rec))
	}
	if rec[0] != Magic {
		return 0, fmt.Errorf("the record starts with byte %d, not the zero byte of the schema registry's framing", rec[0])
	}
	return int(uint32(rec[1])<<24 | uint32(rec[2])<<16 | uint32(rec[3])<<8 | uint32(rec[4])), nil
}

// Writer is a writer's schema under its subject: registered (or, with
// auto_register false, looked up) at the first record, and the framing
// header of its id.
type Writer struct {
	reg          *Registry
	subject      string
	autoRegister bool
	schema       schemaregistry.Schema
	id           int
	header       [5]byte
}

// NewWriter returns the writer of schema under o's subject.
func NewWriter(reg *Registry, o Options, schema schemaregistry.Schema) *Writer {
	return &Writer{reg: reg, subject: o.Subject, autoRegister: o.AutoRegister == nil || *o.AutoRegister, schema: schema}
}

// SetTopic implements connector.TopicFormat for the format's encoder:
// without a subject option the subject is <topic>-value, or <topic>-key
// for a key (Confluent's TopicNameStrategy).
func (w *Writer) SetTopic(topic string, key bool) {
	if w.subject != "" {
		return
	}
	w.subject = topic + "-value"
	if key {
		w.subject = topic + "-key"
	}
}

// Subject returns the subject.
func (w *Writer) Subject() string { return w.subject }

// ID returns the schema's id, once Header succeeded.
func (w *Writer) ID() int { return w.id }

// Header returns the framing of the schema's id, registering or looking
// the schema up first if no record did yet. Every failure is a
// *connector.UnavailableError: a registry away, or one that refuses the
// schema (incompatible with the subject's, or missing with auto_register
// false), is not a record's fault; a later record asks again.
func (w *Writer) Header() ([]byte, error) {
	if w.id != 0 {
		return w.header[:], nil
	}
	if w.subject == "" {
		return nil, errors.New("no subject to register the schema under: set the format's subject (outside a Kafka sink, which names it <topic>-value)")
	}
	var id int
	err := w.reg.Call(func(ctx context.Context) (err error) {
		if w.autoRegister {
			id, err = w.reg.Client.Register(ctx, w.subject, w.schema)
		} else {
			id, err = w.reg.Client.Lookup(ctx, w.subject, w.schema)
		}
		return err
	})
	if err != nil {
		if !errors.As(err, new(*connector.UnavailableError)) {
			err = &connector.UnavailableError{Err: err}
		}
		return nil, err
	}
	w.id = id
	w.header = [5]byte{Magic, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	return w.header[:], nil
}
