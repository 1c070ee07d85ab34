package udf

import (
	"context"
	"testing"

	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// decl is a declaration of a wasm function of module file.
func decl(name, file string, params []row.Type, returns row.Type) *spec.Function {
	d := &spec.Function{Name: name, Kind: "scalar", Language: "wasm", Wasm: file, File: file, Export: name, Returns: returns, Deterministic: true, Path: "functions[0]"}
	for _, p := range params {
		d.Params = append(d.Params, spec.Param{Name: "p", Type: p})
	}
	return d
}

func loadOne(t testing.TB, d *spec.Function) *Function {
	t.Helper()
	r, errs := Load(context.Background(), []*spec.Function{d}, nil)
	if len(errs) > 0 {
		t.Fatal(errs.Err())
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r.Functions()[0]
}

func TestCountChar(t *testing.T) {
	file := wasmbuild.Go(t, "../../sdk/go/examples/count_char")
	f := loadOne(t, decl("count_char", file, []row.Type{row.Of(row.String), row.Of(row.String)}, row.Of(row.BigInt)))
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	s := []row.Value{row.StringValue("abcabc"), row.StringValue(""), row.StringValue("ccc")}
	c := []row.Value{row.StringValue("c"), row.StringValue("c"), row.StringValue("x")}
	out := make([]row.Value, 3)
	errs := make([]error, 3)
	if err := inst.Scalar([][]row.Value{s, c}, 3, out, errs); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{2, 0, 0} {
		if errs[i] != nil || out[i].Type() != row.BigInt || out[i].Int64() != want {
			t.Errorf("row %d: got %v (%v), want %d", i, out[i], errs[i], want)
		}
	}
}
