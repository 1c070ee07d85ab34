"""Reads Parquet files with pyarrow or DuckDB and prints their rows as
JSON lines, each value in the form parquet's interop test renders etld's
own values in: integers, decimals' unscaled values and floats' bits as
strings, times as microseconds, bytes as hex, maps as [key, value] pairs,
rows as lists of their fields.

    python read.py pyarrow|duckdb FILE_OR_GLOB [hive]
    python read.py copy-pyarrow|copy-duckdb IN OUT
    python read.py stats FILE

The copy modes read IN and write its rows to OUT with that library's own
Parquet writer, for etld to read back. The stats mode checks the
statistics of each row group's scalar columns: pyarrow's reading of
them against the group's values (least, greatest, NULL count), and
DuckDB's use of them, counting the file's rows equal to each group's
least and greatest value with DuckDB (which skips a row group whose
bounds leave the value out) and with pyarrow. It prints the number of
checks and the list of what differed, as JSON.
"""
import datetime
import json
import math
import struct
import sys

import pyarrow as pa

EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def micros(delta):
    return delta // datetime.timedelta(microseconds=1)


def norm(v, t):
    if v is None:
        return None
    if pa.types.is_boolean(t):
        return v
    if pa.types.is_integer(t):
        return str(v)
    if pa.types.is_floating(t):
        f = float(v)
        if math.isnan(f):
            return "nan"
        return struct.pack(">d", f).hex()
    if pa.types.is_decimal(t):
        sign, digits, exp = v.as_tuple()
        n = int("".join(map(str, digits)) or "0") * 10 ** (exp + t.scale)
        return str(-n if sign else n)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return v
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return v.hex()
    if pa.types.is_date(t):
        return str((v - datetime.date(1970, 1, 1)).days)
    if pa.types.is_time(t):
        return str(((v.hour * 60 + v.minute) * 60 + v.second) * 1000000 + v.microsecond)
    if pa.types.is_timestamp(t):
        if v.tzinfo is not None:
            return str(micros(v - EPOCH_UTC))
        return str(micros(v - EPOCH))
    if pa.types.is_map(t):
        return [[norm(k, t.key_type), norm(x, t.item_type)] for k, x in v]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [norm(x, t.value_type) for x in v]
    if pa.types.is_struct(t):
        return [norm(v[t.field(i).name], t.field(i).type) for i in range(t.num_fields)]
    raise TypeError("no rendering of %s" % t)


def table(reader, path, hive):
    if reader == "pyarrow":
        if hive:
            import pyarrow.dataset as ds
            return ds.dataset(path, format="parquet", partitioning="hive").to_table()
        import pyarrow.parquet as pq
        return pq.read_table(path)
    import duckdb
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    q = "SELECT * FROM read_parquet(?, hive_partitioning = %s)" % ("true" if hive else "false")
    return con.execute(q, [path]).to_arrow_table()


def copy(writer, src, dst):
    if writer == "copy-pyarrow":
        import pyarrow.parquet as pq
        pq.write_table(pq.read_table(src), dst)
        return
    import duckdb
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("COPY (SELECT * FROM read_parquet(?)) TO '%s' (FORMAT parquet)" % dst.replace("'", "''"), [src])


def stats(path):
    import duckdb
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    f = pq.ParquetFile(path)
    md = f.metadata
    full = f.read()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    checks, problems = 0, []
    for g in range(md.num_row_groups):
        t = f.read_row_group(g)
        for j, field in enumerate(t.schema):
            ty = field.type
            if pa.types.is_nested(ty):
                continue
            checks += 1
            col = t.column(j)
            st = md.row_group(g).column(j).statistics
            where = "row group %d column %s" % (g, field.name)
            if st is None:
                problems.append(where + ": no statistics")
                continue
            if st.null_count != col.null_count:
                problems.append("%s: null count %s, %d NULLs" % (where, st.null_count, col.null_count))
            ns = pa.types.is_timestamp(ty) and ty.unit == "ns"
            if ns:  # Python's datetime holds micros: compare the integers
                col = col.cast(pa.int64())
            mm = pc.min_max(col).as_py()
            if mm["min"] is None:
                if st.has_min_max and not pa.types.is_floating(ty):
                    problems.append("%s: bounds %r %r of no values" % (where, st.min, st.max))
                continue
            if pa.types.is_floating(ty) and math.isnan(mm["min"]):
                # NaNs alone: no bounds, or NaN ones; DuckDB finds them.
                if st.has_min_max and not (math.isnan(st.min) and math.isnan(st.max)):
                    problems.append("%s: bounds %r %r of NaNs alone" % (where, st.min, st.max))
                want = pc.sum(pc.is_nan(full.column(j))).as_py()
                got = con.execute('SELECT count(*) FROM read_parquet(?) WHERE isnan("%s")' % field.name, [path]).fetchone()[0]
                if got != want:
                    problems.append("%s: DuckDB counts %d NaNs, pyarrow %d" % (where, got, want))
                continue
            if not st.has_min_max:
                problems.append("%s: no bounds, values from %r to %r" % (where, mm["min"], mm["max"]))
                continue
            lo, hi = (st.min_raw, st.max_raw) if ns else (st.min, st.max)
            if lo != mm["min"] or hi != mm["max"]:
                problems.append("%s: bounds %r %r, values from %r to %r" % (where, lo, hi, mm["min"], mm["max"]))
            if ns:
                continue
            for v in (mm["min"], mm["max"]):
                want = pc.sum(pc.equal(full.column(j), pa.scalar(v, ty))).as_py()
                got = con.execute('SELECT count(*) FROM read_parquet(?) WHERE "%s" = ?' % field.name, [path, v]).fetchone()[0]
                if got != want:
                    problems.append("%s: DuckDB counts %d rows = %r, pyarrow %d" % (where, got, v, want))
    print(json.dumps([checks, problems]))


def main():
    if sys.argv[1] == "stats":
        stats(sys.argv[2])
        return
    reader, path = sys.argv[1], sys.argv[2]
    if reader.startswith("copy-"):
        copy(reader, path, sys.argv[3])
        return
    hive = len(sys.argv) > 3 and sys.argv[3] == "hive"
    t = table(reader, path, hive)
    print(json.dumps([f.name for f in t.schema]))
    cols = [t.column(i).to_pylist() for i in range(t.num_columns)]
    types = [f.type for f in t.schema]
    for r in range(t.num_rows):
        print(json.dumps([norm(cols[i][r], types[i]) for i in range(t.num_columns)], ensure_ascii=False))


main()
