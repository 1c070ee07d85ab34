"""Reads Parquet files with pyarrow or DuckDB and prints their rows as
JSON lines, each value in the form parquet's interop test renders etld's
own values in: integers, decimals' unscaled values and floats' bits as
strings, times as microseconds, bytes as hex, maps as [key, value] pairs,
rows as lists of their fields.

    python read.py pyarrow|duckdb FILE_OR_GLOB [hive]
    python read.py copy-pyarrow|copy-duckdb IN OUT

The copy modes read IN and write its rows to OUT with that library's own
Parquet writer, for etld to read back.
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


def main():
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
