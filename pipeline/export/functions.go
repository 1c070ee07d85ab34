package export

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/udf"
)

// functions declares each of the pipeline's functions to Flink. Flink
// calls JVM functions, not WebAssembly modules or JavaScript: each name
// becomes CREATE TEMPORARY FUNCTION of a class etld.udf.Name, whose stub
// (a Java class with the signatures, its bodies to port) the script
// carries in a comment, and a difference says so.
func (x *exporter) functions() {
	seen := map[string]bool{}
	for _, f := range x.plan.Functions() {
		key := strings.ToLower(f.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		var overloads []*udf.Function
		for _, g := range x.plan.Functions() {
			if strings.EqualFold(g.Name, f.Name) {
				overloads = append(overloads, g)
			}
		}
		class := "etld.udf." + className(f.Name)
		what := "a WebAssembly module (" + f.Decl.Wasm + ")"
		if f.Language == "javascript" {
			what = "inline JavaScript"
		}
		x.differ(f.Decl.Pos, f.Decl.Path, "function "+f.Name,
			"the function is %s, which Flink cannot call: it calls a JVM class, here %s, whose stub the script carries; implement it and add its jar (pipeline.jars) before running", what, class)
		fmt.Fprintf(&x.body, "-- Function %s: %s in etld. Flink needs a JVM class; a stub to complete:\n", f.Name, what)
		for _, line := range strings.Split(strings.TrimRight(javaStub(className(f.Name), overloads), "\n"), "\n") {
			x.body.WriteString("--   " + line + "\n")
		}
		fmt.Fprintf(&x.body, "CREATE TEMPORARY FUNCTION %s AS %s;\n\n", ident(f.Name), quote(class))
	}
}

// className is a function's name as a Java class: count_char is
// CountChar.
func className(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// javaStub is a Java class for Flink with one method per overload: a
// ScalarFunction's eval, a TableFunction's eval that collects rows, or an
// AggregateFunction's accumulate, retract, merge and getValue.
func javaStub(class string, fs []*udf.Function) string {
	var b strings.Builder
	f := fs[0]
	todo := `throw new UnsupportedOperationException("port the etld function ` + f.Name + `");`
	b.WriteString("package etld.udf;\n\nimport org.apache.flink.table.annotation.*;\nimport org.apache.flink.table.functions.*;\n\n")
	switch f.Kind {
	case udf.Table:
		cols := make([]string, len(f.Columns))
		for i, c := range f.Columns {
			cols[i] = "`" + c.Name + "` " + c.Type.String()
		}
		fmt.Fprintf(&b, "@FunctionHint(output = @DataTypeHint(\"ROW<%s>\"))\npublic class %s extends TableFunction<org.apache.flink.types.Row> {\n", strings.Join(cols, ", "), class)
		for _, g := range fs {
			fmt.Fprintf(&b, "  public void eval(%s) { %s } // collect(Row.of(...)) per row\n", javaParams(g), todo)
		}
	case udf.Aggregate:
		fmt.Fprintf(&b, "public class %s extends AggregateFunction<%s, %s.Acc> {\n  public static class Acc { /* the accumulator */ }\n", class, javaType(f.Returns), class)
		b.WriteString("  public Acc createAccumulator() { return new Acc(); }\n")
		fmt.Fprintf(&b, "  public %s getValue(Acc acc) { %s }\n", javaResult(f.Returns), todo)
		for _, g := range fs {
			fmt.Fprintf(&b, "  public void accumulate(Acc acc, %s) { %s }\n", javaParams(g), todo)
			fmt.Fprintf(&b, "  public void retract(Acc acc, %s) { %s }\n", javaParams(g), todo)
		}
		fmt.Fprintf(&b, "  public void merge(Acc acc, Iterable<Acc> others) { %s }\n", todo)
	default:
		fmt.Fprintf(&b, "public class %s extends ScalarFunction {\n", class)
		for _, g := range fs {
			fmt.Fprintf(&b, "  public %s eval(%s) { %s }\n", javaResult(g.Returns), javaParams(g), todo)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// javaParams is f's parameter list, each with its SQL type as a hint.
func javaParams(f *udf.Function) string {
	ps := make([]string, len(f.Params))
	for i, t := range f.Params {
		name := fmt.Sprintf("p%d", i)
		if i < len(f.Decl.Params) {
			name = f.Decl.Params[i].Name
		}
		ps[i] = fmt.Sprintf("@DataTypeHint(\"%s\") %s %s", t, javaType(t), name)
	}
	return strings.Join(ps, ", ")
}

func javaResult(t row.Type) string {
	return fmt.Sprintf("@DataTypeHint(\"%s\") %s", t, javaType(t))
}

// javaType is the class Flink converts a SQL type to by default.
func javaType(t row.Type) string {
	switch t.ID {
	case row.Boolean:
		return "Boolean"
	case row.Int:
		switch t.IntBits() {
		case 8:
			return "Byte"
		case 16:
			return "Short"
		}
		return "Integer"
	case row.BigInt:
		return "Long"
	case row.Float:
		return "Float"
	case row.Double:
		return "Double"
	case row.Decimal:
		return "java.math.BigDecimal"
	case row.String:
		return "String"
	case row.Bytes:
		return "byte[]"
	case row.Date:
		return "java.time.LocalDate"
	case row.Time:
		return "java.time.LocalTime"
	case row.Timestamp:
		return "java.time.LocalDateTime"
	case row.TimestampLTZ:
		return "java.time.Instant"
	case row.Array:
		return javaType(t.Elem()) + "[]"
	case row.Map:
		return "java.util.Map<" + javaType(t.Key()) + ", " + javaType(t.Elem()) + ">"
	case row.Struct:
		return "org.apache.flink.types.Row"
	}
	return "Object"
}
