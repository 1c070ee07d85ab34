package udf

import (
	"runtime"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// nestedModule is a module of one function of no parameters and no
// results, its sections before the code given as pre (id, body pairs
// in order) and its body's local declarations as locals; custom is a
// custom section after the code.
func nestedModule(types []byte, pre [][]byte, locals []byte, after [][]byte) []byte {
	out := append([]byte{}, wasmHeader...)
	if types == nil {
		types = vec([][]byte{{0x60, 0x00, 0x00}})
	}
	out = append(out, section(1, types)...)
	out = append(out, section(3, vec([][]byte{{0x00}}))...)
	for _, s := range pre {
		out = append(out, section(s[0], s[1:])...)
	}
	body := append(append([]byte{}, locals...), 0x0b)
	out = append(out, section(10, vec([][]byte{append(uleb(uint64(len(body))), body...)}))...)
	for _, s := range after {
		out = append(out, section(s[0], s[1:])...)
	}
	return out
}

// huge is 2^32-1 as a u32 LEB128.
var huge = []byte{0xff, 0xff, 0xff, 0xff, 0x0f}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestNestedCounts loads modules of a few dozen bytes with a count or a
// length inside a section that its bytes cannot hold (or, for locals,
// past the cap): each is refused before wazero allocates what it
// declares (a function of 2^32-1 i64 locals took 4 GiB and a loop of
// 2^32 appends), naming the section and what is wrong, having allocated
// little.
func TestNestedCounts(t *testing.T) {
	str := []row.Type{row.Of(row.String)}
	tests := []struct {
		name string
		code []byte
		want string
	}{
		{"locals", nestedModule(nil, nil, cat([]byte{0x01}, huge, []byte{wI64}), nil),
			"section 10: function 0: 4294967295 locals, more than 50000"},
		{"locals summed", nestedModule(nil, nil, cat([]byte{0x02}, uleb(30000), []byte{wI64}, uleb(30000), []byte{wI32}), nil),
			"section 10: function 0: 60000 locals, more than 50000"},
		{"local declarations", nestedModule(nil, nil, huge, nil),
			"section 10: function 0: offset 5: a vector of 4294967295 items in 1 bytes"},
		{"params", nestedModule(cat([]byte{0x01, 0x60}, huge, []byte{0x00}), nil, []byte{0x00}, nil),
			"section 1: type 0: offset 7: a vector of 4294967295 items in 1 bytes"},
		{"results", nestedModule(cat([]byte{0x01, 0x60, 0x00}, huge), nil, []byte{0x00}, nil),
			"section 1: type 0: offset 8: a vector of 4294967295 items in 0 bytes"},
		{"export name", nestedModule(nil, [][]byte{cat([]byte{7, 0x01}, huge, []byte{0x00, 0x00})}, []byte{0x00}, nil),
			"section 7: export 0: offset 6: unexpected end (4294967295 bytes wanted)"},
		{"data bytes", nestedModule(nil, [][]byte{{5, 0x01, 0x00, 0x01}}, []byte{0x00},
			[][]byte{cat([]byte{11, 0x01, 0x00, 0x41, 0x00, 0x0b}, huge)}),
			"section 11: data segment 0: offset 10: unexpected end (4294967295 bytes wanted)"},
		{"element items", nestedModule(nil, [][]byte{{4, 0x01, 0x70, 0x00, 0x00}, cat([]byte{9, 0x01, 0x00, 0x41, 0x00, 0x0b}, huge)}, []byte{0x00}, nil),
			"section 9: element segment 0: offset 10: a vector of 4294967295 items in 0 bytes"},
		{"function names", nestedModule(nil, nil, []byte{0x00},
			[][]byte{cat([]byte{0}, wname("name"), []byte{0x01, 0x06}, huge, []byte{0x00})}),
			"section 0: name subsection 1: offset 5: a vector of 4294967295 items in 1 bytes"},
		{"local names", nestedModule(nil, nil, []byte{0x00},
			[][]byte{cat([]byte{0}, wname("name"), []byte{0x02, 0x08, 0x01, 0x00}, huge, []byte{0x00})}),
			"section 0: name subsection 2: function 0: offset 7: a vector of 4294967295 items in 1 bytes"},
		{"custom section name", cat(nestedModule(nil, nil, []byte{0x00}, nil), []byte{0, 0x06}, huge, []byte{'x'}),
			"section 0: offset 5: unexpected end (4294967295 bytes wanted)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := loadErr(t, decl("f", writeModule(t, tc.code), str, row.Of(row.String)))
			runtime.ReadMemStats(&after)
			if !strings.Contains(got, "not a valid module: "+tc.want) {
				t.Errorf("got  %s\nwant ...not a valid module: %s", got, tc.want)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("refusing it allocated %d MiB", n>>20)
			}
		})
	}
}
