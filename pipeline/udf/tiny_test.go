package udf

// A tiny WebAssembly assembler for the tests of loading: modules of
// functions that return a constant, with the exports and imports a test
// wants, written byte by byte as the binary format gives them.

const (
	wI32 = 0x7f
	wI64 = 0x7e
)

// tinyFunc is a function of the module: its signature, the constant it
// returns (when it has a result) and the name it is exported under.
type tinyFunc struct {
	export          string
	params, results []byte
	ret             int64
}

// tinyImport is an imported function.
type tinyImport struct {
	module, name    string
	params, results []byte
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

func sleb(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func wname(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func vec(items [][]byte) []byte {
	out := uleb(uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(body)))...), body...)
}

// tinyModule assembles a module with a memory (exported as "memory"
// when memory is set), the imports and the functions.
func tinyModule(memory bool, imports []tinyImport, funcs []tinyFunc) []byte {
	var types, imps, fidx, exps, codes [][]byte
	functype := func(params, results []byte) int {
		types = append(types, append(append([]byte{0x60}, append(uleb(uint64(len(params))), params...)...), append(uleb(uint64(len(results))), results...)...))
		return len(types) - 1
	}
	for _, im := range imports {
		t := functype(im.params, im.results)
		imps = append(imps, append(append(wname(im.module), wname(im.name)...), append([]byte{0x00}, uleb(uint64(t))...)...))
	}
	for i, f := range funcs {
		t := functype(f.params, f.results)
		fidx = append(fidx, uleb(uint64(t)))
		if f.export != "" {
			exps = append(exps, append(wname(f.export), append([]byte{0x00}, uleb(uint64(len(imports)+i))...)...))
		}
		body := []byte{0x00} // no locals
		switch {
		case len(f.results) == 1 && f.results[0] == wI32:
			body = append(append(body, 0x41), sleb(f.ret)...)
		case len(f.results) == 1 && f.results[0] == wI64:
			body = append(append(body, 0x42), sleb(f.ret)...)
		}
		body = append(body, 0x0b)
		codes = append(codes, append(uleb(uint64(len(body))), body...))
	}
	if memory {
		exps = append(exps, append(wname("memory"), 0x02, 0x00))
	}
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	out = append(out, section(1, vec(types))...)
	if len(imps) > 0 {
		out = append(out, section(2, vec(imps))...)
	}
	out = append(out, section(3, vec(fidx))...)
	if memory {
		out = append(out, section(5, vec([][]byte{{0x00, 0x01}}))...)
	}
	out = append(out, section(7, vec(exps))...)
	out = append(out, section(10, vec(codes))...)
	return out
}

// abiFuncs are the ABI's exports of a module whose function f returns
// nothing useful, with etld_abi_version returning version.
func abiFuncs(version int64) []tinyFunc {
	return []tinyFunc{
		{export: "etld_abi_version", results: []byte{wI32}, ret: version},
		{export: "etld_alloc", params: []byte{wI32}, results: []byte{wI32}, ret: 1024},
		{export: "f", params: []byte{wI32, wI32}, results: []byte{wI64}, ret: 0},
	}
}
