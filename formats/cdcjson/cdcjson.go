// Package cdcjson holds the JSON change-data-capture formats besides
// Debezium's (formats/debezium): canal-json (Alibaba Canal), maxwell-json
// (Zendesk Maxwell) and ogg-json (Oracle GoldenGate). Each reads a
// record into the changes it carries (+I, -U/+U for an update, -D) and
// writes changes as Flink's format of the same name writes them. They are
// changelog formats: a source of any connector that reads one is updating
// and needs a key.
//
// The row images are read as the json format reads objects (members by
// name, missing ones NULL, timestamp_format as json's). A record that is
// empty or the literal null (a Kafka tombstone) carries no change, as in
// Flink. A record that cannot be read appends nothing: a Canal message of
// several rows is read whole or not at all, and goes to the source's
// on_error policy, which is what Flink's ignore-parse-errors becomes
// (on_error: skip).
package cdcjson

import (
	"errors"
	"fmt"
	"strings"

	"github.com/etld/etld/formats/json"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the options every format of the package takes.
type Options struct {
	// TimestampFormat is as the json format's: sql (default) or iso-8601.
	TimestampFormat string `yaml:"timestamp_format"`
}

func (o Options) codec(s row.Schema) (*json.Codec, error) {
	return json.NewCodec(s, json.Options{TimestampFormat: o.TimestampFormat})
}

// Register adds canal-json, maxwell-json and ogg-json to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "canal-json", "Canal change messages as JSON (several rows a message): an updating changelog",
		func(o CanalOptions, s row.Schema) (connector.Decoder, error) { return NewCanalDecoder(o, s) },
		func(o CanalOptions, s row.Schema) (connector.Encoder, error) { return newCanalEncoder(o, s) },
		connector.FormatChangelog)
	connector.RegisterFormat(r, "maxwell-json", "Maxwell change messages as JSON: an updating changelog",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewMaxwellDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return newEncoder(o, s, maxwellEvent) },
		connector.FormatChangelog)
	connector.RegisterFormat(r, "ogg-json", "Oracle GoldenGate change records as JSON: an updating changelog",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewOggDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return newEncoder(o, s, oggEvent) },
		connector.FormatChangelog)
}

// member is where one member of a message is: the offsets of its value
// and of the byte after it; pos is -1 when the message has none.
type member struct{ pos, end int }

// isTombstone reports whether the record carries no change: empty, blank
// or the literal null.
func isTombstone(s string) bool {
	i := json.SkipSpace(s, 0)
	return i == len(s) || (isNull(s, i) && json.SkipSpace(s, i+4) == len(s))
}

// isNull reports whether the value at s[i] is the literal null.
func isNull(s string, i int) bool {
	return strings.HasPrefix(s[i:], "null") && (i+4 == len(s) || !isLetter(s[i+4]))
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// nullOrAbsent reports whether the member is missing or null.
func (m member) nullOrAbsent(s string) bool { return m.pos < 0 || isNull(s, m.pos) }

// scanMessage walks the object that is the whole record and notes where
// the members named in names are, in out (parallel to names). Nothing may
// follow the object.
func scanMessage(s string, names []string, out []member) error {
	for i := range out {
		out[i] = member{-1, -1}
	}
	end, err := json.WalkObject(s, 0, func(key string, _, v int) (int, error) {
		end, err := json.SkipValue(s, v)
		for i, n := range names {
			if key == n {
				out[i] = member{v, end}
			}
		}
		return end, err
	})
	if err == nil {
		if end = json.SkipSpace(s, end); end < len(s) {
			err = &json.SyntaxError{Offset: end, Msg: "unexpected data after the message"}
		}
	}
	return err
}

// readString reads the member as a string; "" when absent or null.
func readString(s string, m member) (string, error) {
	if m.nullOrAbsent(s) {
		return "", nil
	}
	v, _, err := json.ReadString(s, m.pos)
	return v, err
}

// elements returns the offsets of the elements of the array m holds.
func elements(s string, m member, name string) ([]member, error) {
	i := json.SkipSpace(s, m.pos)
	if i >= len(s) || s[i] != '[' {
		return nil, fmt.Errorf("%q at byte %d is not an array of rows", name, m.pos)
	}
	var out []member
	i = json.SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return out, nil
	}
	for {
		end, err := json.SkipValue(s, i)
		if err != nil {
			return nil, err
		}
		out = append(out, member{i, end})
		i = json.SkipSpace(s, end)
		switch {
		case i < len(s) && s[i] == ',':
			i = json.SkipSpace(s, i+1)
		case i < len(s) && s[i] == ']':
			return out, nil
		default:
			return nil, &json.SyntaxError{Offset: i, Msg: "expected , or ] in an array"}
		}
	}
}

// images decodes row images out of a message.
type images struct {
	codec *json.Codec
}

// image decodes the object m holds into a new row of b; what names it in
// errors ("after", "data[2]").
func (im images) image(b *row.Batch, s string, m member, what string) (row.Row, error) {
	img := s[m.pos:m.end]
	if len(img)*2 < len(s) {
		// The row's strings point into what they were decoded from;
		// copying the image lets the rest of the message be collected
		// while the row lives on in an aggregate's state.
		img = strings.Clone(img)
	}
	r := b.NewRow()
	if _, err := im.codec.DecodeObject(img, 0, r); err != nil {
		return nil, inImage(err, what)
	}
	return r, nil
}

// before makes the row before an update out of the row after it and the
// object m holds, which has a member for each column the update changed
// (Canal's and Maxwell's "old"). Flink takes a column from the row after
// also when "old" holds null for it; here a null in "old" is the old value
// NULL, which is what Canal and Maxwell mean by it.
func (im images) before(b *row.Batch, s string, m member, after row.Row, what string) (row.Row, error) {
	img := s[m.pos:m.end]
	if len(img)*2 < len(s) {
		img = strings.Clone(img)
	}
	r := b.NewRow()
	copy(r, after)
	if _, err := im.codec.DecodeMembers(img, 0, r); err != nil {
		return nil, inImage(err, what)
	}
	return r, nil
}

// inImage says which image of the message an error is in.
func inImage(err error, what string) error {
	var de *connector.DecodeError
	if errors.As(err, &de) {
		return &connector.DecodeError{Column: de.Column, Err: fmt.Errorf("in %s: %w", what, de.Err)}
	}
	return &connector.DecodeError{Err: fmt.Errorf("in %s: %w", what, err)}
}

// malformed is a DecodeError about the message as a whole.
func malformed(format string, args ...any) error {
	return &connector.DecodeError{Err: fmt.Errorf(format, args...)}
}
