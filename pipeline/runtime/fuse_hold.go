package runtime

import (
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Text holds: the batches a fused Calc makes (calcRows) hold STRING
// values that point into the source's read buffers, as the decoded rows
// did, and so do the rows the nodes after it make of them (a projection
// passes a string on as it is). The source may read into such a buffer
// again only once no value of those is read any more. When every node
// from the fused Calc's reader on is an operator that keeps nothing of
// its input past Process (operator.TextPasser: a Calc, a scalar
// function's call) with one reader, up to a sink that copies the text
// it writes (connector.TextCopier), each made batch carries a textHold:
// every batch a node of that chain makes of it takes a share
// (batchEmitter.seal), the node gives its input's share up once its
// outputs took theirs and it kept nothing of the input, and the sink
// gives up its batch's once written. When the last share goes, the
// made batch goes back to the source (connector.MappedTextRecycler).
// A share never given up (a row a node sent to on_error, a batch cut
// for a watermark, a run that stopped) keeps the buffer from being
// reused, never more.

// textHold counts the batches made of one mapped batch whose values may
// still be read.
type textHold struct {
	refs atomic.Int64
	back func(*row.Batch)
	// made is the batch the source handed out, which back names.
	made *row.Batch
}

func newTextHold(back func(*row.Batch), made *row.Batch) *textHold {
	h := &textHold{back: back, made: made}
	h.refs.Store(1)
	return h
}

// done gives one share up; the last gives the made batch back.
func (h *textHold) done() {
	if h.refs.Add(-1) == 0 {
		h.back(h.made)
	}
}

// derivedOf returns the part of origin o that carries a text hold, nil
// for an origin that cannot.
func derivedOf(o row.Origin) *derivedOrigin {
	switch o := o.(type) {
	case *derivedOrigin:
		return o
	case *slabOrigin:
		return &o.derivedOrigin
	case *fusedOrigin:
		return &o.derivedOrigin
	}
	return nil
}

// takeHold takes b's share of its text hold from it, if it has one and
// n is the node it was given to (nil otherwise), for done once b's text
// is read no more. It must run before b is released: a batch given back
// to its source (release) is the source's to write again.
func takeHold(b *row.Batch, n *Node) *textHold {
	d := derivedOf(b.Origin)
	if d == nil || d.hold == nil || d.holdBy != n {
		return nil
	}
	h := d.hold
	d.hold, d.holdBy = nil, nil
	return h
}

// textDone gives up b's share of its text hold (takeHold); after it,
// b's values must not be read.
func textDone(b *row.Batch, n *Node) {
	if h := takeHold(b, n); h != nil {
		h.done()
	}
}

// shareText gives d, the origin of a batch the node emits while its
// input's share is e.inHold, a share of that hold, when the node passes
// text (textBy).
func (e *batchEmitter) shareText(d *derivedOrigin) {
	if e.textBy != nil && e.inHold != nil {
		e.inHold.refs.Add(1)
		d.hold, d.holdBy = e.inHold, e.textBy
	}
}

// holdInput takes the share of m's batch, before the operator sees it
// (which may release it), for the batches it emits (shareText).
func (r *opRun) holdInput(m message) {
	if r.em.textBy != nil && m.kind == msgBatch {
		r.em.inHold = takeHold(m.batch, &r.n.Node)
	}
}

// passedText gives up the input's share once the node's operator passed
// its text on (TextPasser), after what it emitted took theirs
// (sendEmitted); kept otherwise.
func (r *opRun) passedText() {
	h := r.em.inHold
	r.em.inHold = nil
	if h != nil && r.n.Op.(operator.TextPasser).PassesText() {
		h.done()
	}
}

// holdText makes f's batches carry text holds (above) when the chain of
// nodes after its Calc allows it and the source takes such batches
// back; it marks the chain's operators (OpNode.textBy). Only a fusion
// of one reader whose batches are new (not picked: those are the
// source's own, textRecycle's).
func holdText(g *Graph, f *fusion, readers map[*Node]int, reader map[*Node]*Node, opOf map[*Node]*OpNode) {
	if len(f.readers) != 1 || f.picked || f.readers[0].releaser == nil {
		return
	}
	mt, ok := f.src.Source.(connector.MappedTextRecycler)
	if !ok {
		return
	}
	var chain []*OpNode
	n := f.readers[0].releaser
	for opOf[n] != nil {
		op := opOf[n]
		if _, ok := op.Op.(operator.TextPasser); !ok || readers[n] != 1 || reader[n] == nil {
			return
		}
		chain = append(chain, op)
		n = reader[n]
	}
	if !copiesText(g, n) {
		return
	}
	for _, op := range chain {
		op.textBy = reader[&op.Node]
	}
	f.madeBack = mt.MappedTextRecycle()
}

// copiesText reports whether n is a sink that keeps no byte of the text
// it writes (and no Tap sees its batches).
func copiesText(g *Graph, n *Node) bool {
	for _, sk := range g.Sinks {
		if &sk.Node == n {
			c, ok := sk.Sink.(connector.TextCopier)
			return ok && c.CopiesText() && sk.Tap == nil
		}
	}
	return false
}
