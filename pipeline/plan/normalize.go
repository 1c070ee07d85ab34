package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/spec"
)

// normalizeOver returns the table of a scan: the scan itself, or, for an
// upsert source (connector.UpsertSource), a changelog normalization over
// it keyed by the declared key, as Flink plans ChangelogNormalize after
// an upsert source. Its +U carry no old row and its -D may carry only the
// key, which a filter, an aggregate or a join cannot retract by; the
// normalization keeps each key's last row and emits the whole changelog.
func normalizeOver(scan *Node, s *spec.Source, conn connector.Source) *Node {
	u, ok := conn.(connector.UpsertSource)
	if !ok || !u.Upsert() {
		return scan
	}
	names := make([]string, len(scan.Mode.Key))
	for i, k := range scan.Mode.Key {
		names[i] = scan.Schema.Fields[k].Name
	}
	u.UpsertKey(names)
	return &Node{
		Kind: NormalizeNode, Label: fmt.Sprintf("ChangelogNormalize(key=[%s])", strings.Join(names, ", ")),
		Input: scan, Schema: scan.Schema, Mode: scan.Mode, TimeAttr: scan.TimeAttr, Bounded: scan.Bounded,
		op: &normalizeOp{key: scan.Mode.Key, source: s.Name},
	}
}

// scanNode is a source's scan: its table's root, or the node under the
// root's normalization.
func (s *Source) scanNode() *Node {
	n := s.Table.Root
	if n.Kind == NormalizeNode {
		return n.Input
	}
	return n
}

// normalizeOp is a NormalizeNode's keyed state.
type normalizeOp struct {
	key    []int
	source string
}

func (o *normalizeOp) operator(opBuild) (operator.Lifecycle, error) {
	return rankop.NewNormalize(o.key), nil
}
