package sql

// Window table functions, as Flink writes them:
//
//	TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
//	TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
//	TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))
//	TABLE(SESSION(TABLE t [PARTITION BY k [, ...]], DESCRIPTOR(ts), gap))
//	TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => ...))
//
// The outer TABLE( ) may be left out; Format always writes it.

func windowFuncStart(t token) bool {
	return t.kind == tokWord && windowKinds[t.up] != 0
}

var windowKinds = map[string]WindowKind{"TUMBLE": Tumble, "HOP": Hop, "CUMULATE": Cumulate, "SESSION": Session}

// windowParams lists each function's positional parameters after the table
// and time column; the last (OFFSET) is optional.
var windowParams = map[WindowKind][]string{
	Tumble:   {"SIZE", "OFFSET"},
	Hop:      {"SLIDE", "SIZE", "OFFSET"},
	Cumulate: {"STEP", "SIZE", "OFFSET"},
	Session:  {"GAP"},
}

func windowSignature(k WindowKind) string {
	switch k {
	case Hop:
		return "HOP(TABLE t, DESCRIPTOR(time_col), slide, size [, offset])"
	case Cumulate:
		return "CUMULATE(TABLE t, DESCRIPTOR(time_col), step, size [, offset])"
	case Session:
		return "SESSION(TABLE t [PARTITION BY col, ...], DESCRIPTOR(time_col), gap)"
	}
	return "TUMBLE(TABLE t, DESCRIPTOR(time_col), size [, offset])"
}

func (p *parser) parseWindowTVF() (FromItem, *Error) {
	w := &WindowTVF{At: p.tok().pos}
	var outer token
	wrapped := p.tok().is("TABLE")
	if wrapped {
		p.next()
		outer = p.next() // (
	}
	fn := p.tok()
	if !windowFuncStart(fn) || !p.peek(1).isPunct("(") {
		return nil, p.expected("TUMBLE, HOP, CUMULATE or SESSION after TABLE(", "TUMBLE", "HOP", "CUMULATE", "SESSION")
	}
	w.Kind, w.KindAt = windowKinds[fn.up], fn.pos
	p.next()
	open := p.next()
	var err *Error
	if p.tok().kind == tokWord && p.peek(1).isPunct("=>") {
		err = p.windowNamedArgs(w, open)
	} else {
		err = p.windowPositionalArgs(w, open)
	}
	if err != nil {
		return nil, err
	}
	if wrapped {
		if err := p.expectClose(")", "TABLE(", outer.pos); err != nil {
			return nil, err
		}
	}
	if w.Alias, err = p.fromAlias(); err != nil {
		return nil, err
	}
	return w, nil
}

func (p *parser) windowPositionalArgs(w *WindowTVF, open token) *Error {
	name := w.Kind.String()
	if err := p.windowTable(w, name+"("); err != nil {
		return err
	}
	if !p.acceptPunct(",") {
		return p.expected(`"," and DESCRIPTOR(time_col) in `+windowSignature(w.Kind), ",")
	}
	if err := p.windowTimeCol(w); err != nil {
		return err
	}
	params := windowParams[w.Kind]
	for i, param := range params {
		if !p.acceptPunct(",") {
			if i < len(params)-1 || param != "OFFSET" {
				t := p.tok()
				if t.isPunct(")") || t.kind == tokEOF {
					return p.errAt(t, name+" needs a "+lower(param)+": "+windowSignature(w.Kind), ",")
				}
				return p.expected(`"," and the `+lower(param)+" in "+windowSignature(w.Kind), ",")
			}
			break
		}
		if p.tok().kind == tokWord && p.peek(1).isPunct("=>") {
			return p.errAt(p.tok(), "named and positional arguments cannot be mixed in "+name)
		}
		e, err := p.expectExpr(`"," in ` + name)
		if err != nil {
			return err
		}
		setWindowParam(w, param, e)
	}
	if t := p.tok(); t.isPunct(",") {
		return p.errAt(t, name+" takes at most "+itoa(len(params)+2)+" arguments: "+windowSignature(w.Kind))
	}
	return p.expectClose(")", name+"(", open.pos)
}

func (p *parser) windowNamedArgs(w *WindowTVF, open token) *Error {
	name := w.Kind.String()
	w.Named = true
	allowed := append([]string{"DATA", "TIMECOL"}, windowParams[w.Kind]...)
	seen := map[string]bool{}
	for {
		t := p.tok()
		if t.kind != tokWord || !p.peek(1).isPunct("=>") {
			if t.kind == tokWord || t.kind == tokQuoted || t.kind == tokString {
				return p.errAt(t, "named and positional arguments cannot be mixed in "+name)
			}
			return p.expected("a named argument (NAME => value) in "+name, allowed...)
		}
		if !contains(allowed, t.up) {
			return p.errAt(t, name+" has no parameter "+t.text+didYouMean(t.up, allowed)+
				" (its parameters: "+joinWords(allowed)+")", allowed...)
		}
		if seen[t.up] {
			return p.errAt(t, "parameter "+t.up+" is given twice")
		}
		seen[t.up] = true
		p.next()
		p.next() // =>
		var err *Error
		switch t.up {
		case "DATA":
			err = p.windowTable(w, "DATA =>")
		case "TIMECOL":
			err = p.windowTimeCol(w)
		default:
			var e Expr
			if e, err = p.expectExpr(t.up + " =>"); err == nil {
				setWindowParam(w, t.up, e)
			}
		}
		if err != nil {
			return err
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	end := p.tok()
	if err := p.expectClose(")", name+"(", open.pos); err != nil {
		return err
	}
	for _, req := range allowed {
		if !seen[req] && req != "OFFSET" {
			return p.errAt(end, name+" is missing the "+req+" argument: "+windowSignature(w.Kind), req)
		}
	}
	return nil
}

// windowTable reads `TABLE name`.
func (p *parser) windowTable(w *WindowTVF, after string) *Error {
	t := p.tok()
	if !t.is("TABLE") {
		if isName(t) {
			return p.errAt(t, "write TABLE "+t.text+" to pass a table to a window function")
		}
		return p.expected("TABLE name after "+after, "TABLE")
	}
	p.next()
	if p.tok().isPunct("(") {
		return p.errAt(p.tok(), "a window function reads a named table (TABLE name), not a subquery; define the subquery as its own transform")
	}
	name, err := p.expectName("a table name after TABLE")
	if err != nil {
		return err
	}
	if p.tok().isPunct(".") {
		return p.errAt(p.tok(), "qualified table names (catalog.database.table) are not supported: name a source or a transform")
	}
	w.Table = name
	if p.tok().is("PARTITION") {
		if w.Kind != Session {
			return p.errAt(p.tok(), "PARTITION BY is only for SESSION windows; "+w.Kind.String()+" reads the table as a whole")
		}
		return p.windowPartition(w)
	}
	return nil
}

// windowPartition reads SESSION's `PARTITION BY a, b` or `PARTITION BY
// (a, b)`. Unparenthesised, the list ends before a comma that is followed
// by DESCRIPTOR( or by a named argument.
func (p *parser) windowPartition(w *WindowTVF) *Error {
	p.next()
	if !p.tok().is("BY") {
		return p.expected("BY after PARTITION", "BY")
	}
	p.next()
	var open token
	if p.tok().isPunct("(") {
		open = p.next()
		w.PartitionParens = true
	}
	for {
		col, err := p.expectName("a column name in PARTITION BY")
		if err != nil {
			return err
		}
		if p.tok().isPunct(".") {
			return p.errAt(p.tok(), "PARTITION BY takes bare column names")
		}
		w.PartitionBy = append(w.PartitionBy, col)
		if !p.tok().isPunct(",") {
			break
		}
		if !w.PartitionParens {
			n := p.peek(1)
			if (n.is("DESCRIPTOR") && p.peek(2).isPunct("(")) || (n.kind == tokWord && p.peek(2).isPunct("=>")) {
				break
			}
		}
		p.next()
	}
	if w.PartitionParens {
		return p.expectClose(")", "PARTITION BY (", open.pos)
	}
	return nil
}

// windowTimeCol reads `DESCRIPTOR(col)`.
func (p *parser) windowTimeCol(w *WindowTVF) *Error {
	d := p.tok()
	if !d.is("DESCRIPTOR") || !p.peek(1).isPunct("(") {
		return p.expected("DESCRIPTOR(time_col) naming the time attribute", "DESCRIPTOR")
	}
	p.next()
	open := p.next()
	col, err := p.expectName("a time column in DESCRIPTOR(")
	if err != nil {
		return err
	}
	if t := p.tok(); t.isPunct(",") {
		return p.errAt(t, "DESCRIPTOR takes exactly one time column")
	}
	if t := p.tok(); t.isPunct(".") {
		return p.errAt(t, "DESCRIPTOR takes a bare column name")
	}
	w.TimeCol = col
	return p.expectClose(")", "DESCRIPTOR(", open.pos)
}

func setWindowParam(w *WindowTVF, param string, e Expr) {
	switch param {
	case "SIZE":
		w.Size = e
	case "SLIDE":
		w.Slide = e
	case "STEP":
		w.Step = e
	case "OFFSET":
		w.Offset = e
	case "GAP":
		w.Gap = e
	}
}
