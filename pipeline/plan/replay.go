package plan

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
)

// replayOf derives what a run restored from a checkpoint sends again to a
// sink reading t (connector.Replay): ByRecord when every node between the
// sources and the sink maps one record to its changes without state (a
// Calc: projection and filter; a UNION ALL, which passes each input's
// changes on in their order), no expression reads the clock, and every
// source reads the same records of each input again in order. Stateful
// operators do not qualify: over inputs that interleave differently (the
// partitions of a Kafka topic) a restored run emits other intermediate
// results, and a window's results come from no one record.
func replayOf(t *Table) connector.Replay { return replayFrom(t.Root) }

func replayFrom(n *Node) connector.Replay {
	no := func(format string, args ...any) connector.Replay {
		return connector.Replay{Why: fmt.Sprintf(format, args...)}
	}
	for ; n != nil; n = n.Input {
		switch n.Kind {
		case ScanNode:
			src := n.scanned()
			if src == nil || src.Conn == nil {
				return no("its source did not build")
			}
			name := src.Spec.Name
			if c := firstClock(append(append([]*expr.Compiled(nil), src.computed...), src.watermark)); c != "" {
				return no("source %q: a computed column or the watermark calls %s, which reads the clock or is random", name, c)
			}
			rp, ok := src.Conn.(connector.Replayer)
			if !ok {
				return no("source %q (%s) does not promise to read the same records again after a restore", name, src.Spec.Type)
			}
			if why := rp.Replays(); why != "" {
				return no("source %q: %s", name, why)
			}
		case CalcNode:
			if c := firstClock(append([]*expr.Compiled{n.calc().filter}, n.calc().project...)); c != "" {
				return no("%s calls %s, which reads the clock or is random", n.Label, c)
			}
		case UnnestNode:
			if c := firstClock([]*expr.Compiled{n.op.(*unnestOp).of}); c != "" {
				return no("%s calls %s, which reads the clock or is random", n.Label, c)
			}
		case FunctionNode, LateralNode:
			// Stateless, unless a function gives other results for the
			// same arguments.
			if why := nondeterministicCalls(n); why != "" {
				return no("%s calls %s", n.Label, why)
			}
		case WindowTableNode:
			// Stateless: each record's rows follow from the record.
		case UnionNode:
			// Stateless: the inputs interleave differently from run to
			// run, which ByRecord allows; the runtime's union names each
			// input apart (a source read by two inputs too).
			for _, in := range n.Inputs {
				if r := replayFrom(in); !r.ByRecord {
					return r
				}
			}
			return connector.Replay{ByRecord: true}
		case GroupAggNode, DistinctNode, RankNode, DedupNode, NormalizeNode:
			return no("%s keeps state: its results depend on how the inputs interleave, which a restored run may change", n.Label)
		case WindowAggNode, WindowRankNode:
			return no("%s: a window's results come from no one source record", n.Label)
		case OverAggNode:
			return no("%s keeps state: a row's results depend on the rows before it", n.Label)
		default:
			return no("%s is not known to replay the same changes", n.Label)
		}
	}
	return connector.Replay{ByRecord: true}
}

// firstClock names the first clock-reading function of cs (nil entries
// are skipped), or "".
func firstClock(cs []*expr.Compiled) string {
	for _, c := range cs {
		if c != nil && c.Clock != "" {
			return c.Clock
		}
	}
	return ""
}
