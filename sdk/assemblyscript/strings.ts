// Two etld functions in AssemblyScript, written straight against the batch
// ABI (docs/udf.md) with no SDK: count_char(s STRING, c STRING) BIGINT
// (Nexmark's query 14) and upper(s STRING) STRING (ASCII letters upper-
// cased). Built by the tests with AssemblyScript's compiler:
//
//   asc strings.ts --outFile strings.wasm --runtime stub --optimize
//
// The stub runtime allocates and never frees: the module keeps one input
// and one output buffer, grown by doubling, and allocates nothing per call.

const VERSION: u32 = 1;
const STRING: u8 = 9;
const BIGINT: u8 = 5;

let inBuf: usize = 0;
let inCap: usize = 0;
let outBuf: usize = 0;
let outCap: usize = 0;

export function etld_abi_version(): u32 {
  return VERSION;
}

// etld_alloc returns a buffer etld writes batches into; it stays until
// the next call.
export function etld_alloc(size: u32): usize {
  if (<usize>size > inCap) {
    inBuf = heap.alloc(<usize>size);
    inCap = <usize>size;
  }
  return inBuf;
}

// out makes sure the output buffer holds n bytes.
function out(n: usize): usize {
  if (n > outCap) {
    let cap = outCap * 2;
    if (cap < n) cap = n;
    outBuf = heap.alloc(cap);
    outCap = cap;
  }
  return outBuf;
}

// skipType returns the address after the type at p.
function skipType(p: usize): usize {
  const code = load<u8>(p);
  p += 1;
  if (code == 8) return p + 2; // DECIMAL(p, s)
  if (code >= 12 && code <= 14) return p + 1; // TIME, TIMESTAMP, TIMESTAMP_LTZ
  if (code == 15) return skipType(p); // ARRAY<T>
  if (code == 16) return skipType(skipType(p)); // MAP<K, V>
  if (code == 17) {
    const n = <u32>load<u16>(p);
    p += 2;
    for (let i: u32 = 0; i < n; i++) {
      p += 2 + <usize>load<u16>(p);
      p = skipType(p);
    }
  }
  return p;
}

// A string column: where its null flags, offsets and bytes are.
class Strings {
  nulls: usize = 0;
  offs: usize = 0;
  data: usize = 0;
  end: usize = 0;
}

// readStrings reads the STRING column of n values at p.
function readStrings(p: usize, n: u32, col: Strings): void {
  assert(load<u8>(p) == STRING, "a STRING argument");
  col.nulls = p + 1;
  col.offs = col.nulls + <usize>n;
  col.data = col.offs + 4 * (<usize>n + 1);
  col.end = col.data + <usize>load<u32>(col.offs + 4 * <usize>n);
}

const a = new Strings();
const b = new Strings();

// header reads a batch's header and skips its result types; it returns
// the address of the first argument column and sets rows.
let rows: u32 = 0;

function header(p: usize): usize {
  assert(load<u32>(p) == VERSION, "batch version 1");
  rows = load<u32>(p + 8);
  const k = load<u32>(p + 16);
  p += 20;
  for (let i: u32 = 0; i < k; i++) p = skipType(p);
  return p;
}

function packed(ptr: usize, len: usize): u64 {
  return (<u64>ptr << 32) | <u64>len;
}

export function count_char(ptr: usize, len: u32): u64 {
  const p = header(ptr);
  readStrings(p, rows, a);
  readStrings(a.end, rows, b);
  const n = <usize>rows;
  const size: usize = 8 + 1 + n + 8 * n;
  const o = out(size);
  store<u32>(o, rows);
  store<u32>(o + 4, 0); // no errors
  store<u8>(o + 8, BIGINT);
  const nulls = o + 9;
  const vals = nulls + n;
  for (let i: usize = 0; i < n; i++) {
    const isNull = load<u8>(a.nulls + i) | load<u8>(b.nulls + i);
    store<u8>(nulls + i, isNull);
    let count: i64 = 0;
    if (!isNull) {
      const s = a.data + <usize>load<u32>(a.offs + 4 * i);
      const sEnd = a.data + <usize>load<u32>(a.offs + 4 * (i + 1));
      const c = b.data + <usize>load<u32>(b.offs + 4 * i);
      const cLen = b.data + <usize>load<u32>(b.offs + 4 * (i + 1)) - c;
      if (cLen > 0) {
        let q = s;
        while (q + cLen <= sEnd) {
          if (memory.compare(q, c, cLen) == 0) {
            count++;
            q += cLen;
          } else {
            q++;
          }
        }
      }
    }
    store<i64>(vals + 8 * i, count);
  }
  return packed(o, size);
}

export function upper(ptr: usize, len: u32): u64 {
  const p = header(ptr);
  readStrings(p, rows, a);
  const n = <usize>rows;
  const bytes = a.end - a.data;
  const size: usize = 8 + 1 + n + 4 * (n + 1) + bytes;
  const o = out(size);
  store<u32>(o, rows);
  store<u32>(o + 4, 0);
  store<u8>(o + 8, STRING);
  // The same null flags and offsets: ASCII upper-casing keeps lengths.
  memory.copy(o + 9, a.nulls, n + 4 * (n + 1));
  const dst = o + 9 + n + 4 * (n + 1);
  // Eight bytes at a time: a byte is a lower-case ASCII letter when its
  // low seven bits plus 0x1F carry into bit 7 (>= 'a') and plus 0x05 do
  // not (<= 'z'), and its own bit 7 is clear; bit 5 (0x20) of those is
  // cleared.
  let i: usize = 0;
  for (; i + 8 <= bytes; i += 8) {
    const w = load<u64>(a.data + i);
    const low = w & 0x7F7F7F7F7F7F7F7F;
    const letters = (low + 0x1F1F1F1F1F1F1F1F) & ~(low + 0x0505050505050505) & ~w & 0x8080808080808080;
    store<u64>(dst + i, w ^ (letters >> 2));
  }
  for (; i < bytes; i++) {
    let ch = load<u8>(a.data + i);
    if (ch >= 97 && ch <= 122) ch -= 32;
    store<u8>(dst + i, ch);
  }
  return packed(o, size);
}
