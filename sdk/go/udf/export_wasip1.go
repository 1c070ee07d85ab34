//go:build wasip1

package udf

import "unsafe"

// The module's side of a call: etld asks etld_alloc for a buffer, writes
// the batch into it and calls the function with its address and length;
// the function returns its output's address and length packed in one
// u64 (address << 32 | length). Both buffers are reused: the input is
// valid during the call, the output until the next call.

var inBuf, outBuf []byte

//go:wasmexport etld_abi_version
func abiVersion() uint32 { return Version }

//go:wasmexport etld_alloc
func alloc(size uint32) uint32 {
	if cap(inBuf) < int(size) || cap(inBuf) == 0 {
		inBuf = make([]byte, max(size, 64))
	}
	inBuf = inBuf[:size]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(inBuf))))
}

// input is the batch of a call: the buffer etld_alloc gave, which etld
// filled.
func input(size uint32) []byte {
	if int(size) > cap(inBuf) {
		return nil
	}
	return inBuf[:size]
}

func output(b []byte) uint64 {
	outBuf = b
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(outBuf))))<<32 | uint64(len(outBuf))
}

// Scalar is the body of a scalar function's export:
//
//	//go:wasmexport count_char
//	func countChar(ptr, size uint32) uint64 { return udf.Scalar(ptr, size, f) }
func Scalar(ptr, size uint32, f ScalarFunc) uint64 { return output(ScalarBytes(input(size), f)) }

// Table is the body of a table function's export.
func Table(ptr, size uint32, f TableFunc) uint64 { return output(TableBytes(input(size), f)) }

// Raw is the body of an export that reads the batch's bytes and writes
// its output's itself, in the layout docs/udf.md gives.
func Raw(ptr, size uint32, f func(in []byte) []byte) uint64 { return output(f(input(size))) }

// Aggregate is the body of an aggregate function's export.
func Aggregate(ptr, size uint32, f Agg) uint64 { return output(AggregateBytes(input(size), f)) }
