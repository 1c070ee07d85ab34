package row

import "strings"

// Kind is a change's row kind, as Flink's RowKind.
type Kind uint8

const (
	Insert       Kind = iota // +I
	UpdateBefore             // -U: the old row of an update, retracted
	UpdateAfter              // +U: the new row of an update
	Delete                   // -D
)

var kindShort = [...]string{"+I", "-U", "+U", "-D"}

// String is Flink's RowKind.shortString: +I, -U, +U, -D.
func (k Kind) String() string {
	if int(k) < len(kindShort) {
		return kindShort[k]
	}
	return "?"
}

// IsAdd reports whether the change adds its row to the table (+I, +U).
func (k Kind) IsAdd() bool { return k == Insert || k == UpdateAfter }

// ParseKind reads +I, -U, +U or -D.
func ParseKind(s string) (Kind, bool) {
	for i, k := range kindShort {
		if s == k {
			return Kind(i), true
		}
	}
	return 0, false
}

// Row is one row's values in schema order.
type Row []Value

// Clone copies r; values are immutable so a shallow copy suffices.
func (r Row) Clone() Row { return append(Row(nil), r...) }

// AppendPrint writes r as Flink's print connector does: +I[1, true].
func AppendPrint(dst []byte, k Kind, r Row) []byte {
	dst = append(dst, k.String()...)
	dst = append(dst, '[')
	for i, v := range r {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = v.AppendPrint(dst)
	}
	return append(dst, ']')
}

// Change is a row with its kind.
type Change struct {
	Kind Kind
	Row  Row
}

func (c Change) String() string { return string(AppendPrint(nil, c.Kind, c.Row)) }

// Batch is the unit operators pass to each other. A batch is immutable once
// sent: a batch may go to several receivers, which read it and may keep it
// but never modify it or its rows.
type Batch struct {
	Changes []Change
	// Origin, if set, names the record each change came from, for errors
	// (see Origin); nil when nothing knows.
	Origin Origin
	// arena backs the rows of NewRow so that a batch of n rows of width w
	// costs a few allocations, not n.
	arena []Value
	width int
}

// NewBatch makes a batch for up to capacity rows of width columns.
func NewBatch(capacity, width int) *Batch {
	return &Batch{
		Changes: make([]Change, 0, capacity),
		arena:   make([]Value, 0, capacity*width),
		width:   width,
	}
}

// NewRow returns a row of the batch's width carved from its arena, zeroed
// unless the batch was reused (Reuse).
// The row is not yet part of the batch: Append it.
func (b *Batch) NewRow() Row {
	if len(b.arena)+b.width > cap(b.arena) {
		n := max(cap(b.arena), 64*b.width)
		b.arena = make([]Value, 0, n)
	}
	start := len(b.arena)
	b.arena = b.arena[:start+b.width]
	return b.arena[start : start+b.width : start+b.width]
}

// Append adds a change.
func (b *Batch) Append(k Kind, r Row) { b.Changes = append(b.Changes, Change{Kind: k, Row: r}) }

// Len is the number of changes.
func (b *Batch) Len() int { return len(b.Changes) }

// String renders the batch in print format, one change per line.
func (b *Batch) String() string {
	var sb strings.Builder
	for _, c := range b.Changes {
		sb.WriteString(c.String())
		sb.WriteByte('\n')
	}
	return sb.String()
}
