package udf

import (
	"bytes"
	"fmt"
)

// MaxLocals bounds the locals a function of a module declares (its
// parameters aside), as V8 and SpiderMonkey do (the JS API's limit of
// 50000): a module that runs in a browser passes it.
const MaxLocals = 50000

// checkVectorCounts refuses a module with a count or a length its bytes
// cannot hold (every item takes a byte at least): a section's vector, and
// inside the sections the runtime reads item by item the counts and
// lengths it allocates from (a type's parameters and results, a name, a
// data segment's bytes, an element segment's items, a function's local
// declarations, the name section's maps), and a function's locals past
// MaxLocals, which take no bytes each (a count and a type declare any
// number of them). Why here, before wazero sees the module: wazero
// allocates what a count declares before it reads the items, so that a
// module of a dozen bytes declaring 2^32-1 functions costs 16 GiB before
// it is refused, and one declaring 2^32-1 locals of a function 32 GiB,
// enough to take the daemon and every pipeline in it down at a reload.
// The walk reads only counts, lengths and what it must skip to reach
// them, once (it runs at every load); where it meets what it does not
// know (a proposal's form), it leaves the rest of the section to wazero,
// which refuses what it does not know before it reads a count past it.
func checkVectorCounts(code []byte) error {
	if !bytes.HasPrefix(code, wasmHeader) {
		return nil // wazero says what it is not
	}
	r := &wreader{b: code, off: len(wasmHeader)}
	for !r.done() {
		id := r.byte()
		body := r.take(uint64(r.u32()))
		if r.err != nil {
			return nil // a truncated module: wazero refuses it without reading a count
		}
		if err := checkSection(id, body); err != nil {
			return fmt.Errorf("not a valid module: section %d: %w", id, err)
		}
	}
	return nil
}

// counts walks a section; unknown is set where it meets what it does
// not read, and the walk stops there without an error.
type counts struct {
	*wreader
	unknown bool
}

func (c *counts) stop() {
	c.unknown = true
	c.off = len(c.b)
}

// each walks a vector's items with what, prefixing an error with the
// item (kind and index).
func (c *counts) each(kind string, what func()) error {
	n := c.count()
	for i := uint32(0); i < n && c.err == nil && !c.unknown; i++ {
		what()
		if c.err != nil {
			return fmt.Errorf("%s %d: %w", kind, i, c.err)
		}
	}
	return c.err
}

// checkSection checks the counts and lengths of a section's body.
func checkSection(id byte, body []byte) error {
	c := &counts{wreader: &wreader{b: body}}
	switch id {
	case 0:
		return c.custom()
	case 1:
		return c.each("type", c.funcType)
	case 2:
		return c.each("import", c.importDesc)
	case 7:
		return c.each("export", func() { c.name(); c.byte(); c.u32() })
	case 8, 12:
		return nil // an index, a count of data segments: no vector
	case 9:
		return c.each("element segment", c.element)
	case 10:
		return c.each("function", c.function)
	case 11:
		return c.each("data segment", c.data)
	}
	// The function, table, memory, global and tag sections: their items
	// hold no count.
	c.count()
	return c.err
}

// funcType walks a type: a function's (0x60), or a recursive group's
// (0x4e) of them; the other forms of the GC proposal are left to wazero.
func (c *counts) funcType() {
	switch c.byte() {
	case 0x60:
		for range 2 { // parameters, results
			for n, i := c.count(), uint32(0); i < n && c.err == nil; i++ {
				c.valtype()
			}
		}
	case 0x4e:
		for n, i := c.count(), uint32(0); i < n && c.err == nil && !c.unknown; i++ {
			if c.off >= len(c.b) || c.b[c.off] != 0x60 {
				c.stop()
				return
			}
			c.funcType()
		}
	default:
		c.stop()
	}
}

// valtype skips a value type: a byte, or a reference type's prefix and
// its heap type. An invalid one is wazero's to refuse.
func (c *counts) valtype() {
	if t := c.byte(); t == 0x63 || t == 0x64 {
		c.leb(5)
	}
}

func (c *counts) importDesc() {
	c.name()
	c.name()
	switch kind := c.byte(); kind {
	case 0x00: // a function's type
		c.u32()
	case 0x01: // a table: a reference type, limits
		c.valtype()
		c.limits()
	case 0x02: // a memory
		c.limits()
	case 0x03: // a global
		c.valtype()
		c.byte()
	default:
		c.stop()
	}
}

// function walks a function's body: its local declarations, each a
// count of locals of a type, whose sum MaxLocals bounds.
func (c *counts) function() {
	body := c.take(uint64(c.u32()))
	if c.err != nil {
		return
	}
	f := &counts{wreader: &wreader{b: body}}
	var sum uint64
	for n, i := f.count(), uint32(0); i < n && f.err == nil; i++ {
		sum += uint64(f.u32())
		f.valtype()
	}
	switch {
	case f.err != nil:
		c.err = f.err
	case sum > MaxLocals:
		c.err = fmt.Errorf("%d locals, more than %d", sum, MaxLocals)
	}
}

// data walks a data segment to its bytes, whose length take checks.
func (c *counts) data() {
	switch flags := c.u32(); flags {
	case 0: // active, memory 0
		c.constExpr()
	case 1: // passive
	case 2: // active, a memory
		c.u32()
		c.constExpr()
	default:
		c.stop()
		return
	}
	if !c.unknown {
		c.name()
	}
}

// element walks an element segment (its eight forms) and its items.
func (c *counts) element() {
	flags := c.u32()
	if flags > 7 {
		c.stop()
		return
	}
	if flags&1 == 0 { // active
		if flags&2 != 0 {
			c.u32() // table
		}
		c.constExpr()
	}
	if flags&3 != 0 {
		c.valtype() // elemkind or reference type
	}
	for n, i := c.count(), uint32(0); i < n && c.err == nil && !c.unknown; i++ {
		if flags&4 != 0 {
			c.constExpr()
		} else {
			c.u32()
		}
	}
}

// constExpr skips a constant expression: the instructions wazero takes
// in one, up to its end.
func (c *counts) constExpr() {
	for c.err == nil && !c.unknown {
		switch op := c.byte(); op {
		case 0x0b: // end
			return
		case 0x41, 0x23, 0xd2: // i32.const, global.get, ref.func
			c.leb(5)
		case 0x42: // i64.const
			c.leb(10)
		case 0x43:
			c.take(4)
		case 0x44:
			c.take(8)
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const arithmetic
		case 0xd0: // ref.null: a heap type
			c.leb(5)
		case 0xfd: // v128.const
			if c.u32() != 12 {
				c.stop()
				return
			}
			c.take(16)
		default:
			c.stop()
		}
	}
}

// custom walks a custom section's name and, in the name section, the
// module's, functions' and locals' names.
func (c *counts) custom() error {
	if string(c.name()) != "name" || c.err != nil {
		return c.err
	}
	for !c.done() {
		id := c.byte()
		sub := &counts{wreader: &wreader{b: c.take(uint64(c.u32()))}}
		if c.err != nil {
			return c.err
		}
		var err error
		switch id {
		case 0:
			sub.name()
			err = sub.err
		case 1:
			err = sub.each("function", func() { sub.u32(); sub.name() })
		case 2:
			err = sub.each("function", func() {
				sub.u32()
				for n, i := sub.count(), uint32(0); i < n && sub.err == nil; i++ {
					sub.u32()
					sub.name()
				}
			})
		}
		if err != nil {
			return fmt.Errorf("name subsection %d: %w", id, err)
		}
	}
	return nil
}
