package datagen

import (
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
)

// TestConformance runs the connector kit on a seeded, bounded datagen
// source: one that replays.
func TestConformance(t *testing.T) {
	const src = `type: datagen
rows: 300
seed: 42
schema: [id BIGINT, v STRING, d DOUBLE]
fields: {id: {kind: sequence, start: 1, end: 300}, v: {length: 5}, d: {min: -1, max: 1}}
`
	conntest.RunSource(t, conntest.Source{
		Max:     7,
		Ordered: true,
		Input: func(t *testing.T) func(t *testing.T) connector.Source {
			return func(t *testing.T) connector.Source {
				s, err := build(t, src)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		},
	})
}
