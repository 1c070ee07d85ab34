package udf

import (
	"context"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
)

// TestAssemblyScriptFunctions runs functions written in AssemblyScript
// straight against the batch ABI, with no SDK: the ABI is not Go's.
// The module is compiled from source with the compiler testenv/tools.sh
// installs from npm.
func TestAssemblyScriptFunctions(t *testing.T) {
	module := wasmbuild.AssemblyScript(t, testenv.ASC(t), "../../sdk/assemblyscript/strings.ts")
	cc := loadOne(t, decl("count_char", module, []row.Type{row.Of(row.String), row.Of(row.String)}, row.Of(row.BigInt)))
	up := loadOne(t, decl("upper", module, []row.Type{row.Of(row.String)}, row.Of(row.String)))
	words := []string{"abcabc", "", "héllo wörld", "cccc", strings.Repeat("xc", 5000)}
	s, c := make([]row.Value, len(words)), make([]row.Value, len(words))
	for i, w := range words {
		s[i], c[i] = row.StringValue(w), row.StringValue("c")
	}
	for _, tc := range []struct {
		f    *Function
		args [][]row.Value
		want func(w string) row.Value
	}{
		{cc, [][]row.Value{s, c}, func(w string) row.Value { return row.BigIntValue(int64(strings.Count(w, "c"))) }},
		{up, [][]row.Value{s}, func(w string) row.Value {
			return row.StringValue(strings.Map(func(r rune) rune {
				if 'a' <= r && r <= 'z' {
					return r - 32
				}
				return r
			}, w))
		}},
	} {
		inst, err := tc.f.NewInstance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out, errs := make([]row.Value, len(words)), make([]error, len(words))
		if err := inst.Scalar(tc.args, len(words), out, errs); err != nil {
			t.Fatal(err)
		}
		for i, w := range words {
			if want := tc.want(w); errs[i] != nil || !row.Equal(out[i], want) {
				t.Errorf("%s(%.20q): got %v (%v), want %v", tc.f.Name, w, out[i], errs[i], want)
			}
		}
		inst.Close(context.Background())
	}
}
