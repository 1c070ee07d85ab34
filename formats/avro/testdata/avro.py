"""Reads Avro object container files with fastavro and prints their rows
as JSON lines, each value in the form the avro file test renders etld's
own values in: integers, decimals' unscaled values and floats' bits as
strings, dates as days, times and timestamps as microseconds, bytes as
hex, maps as [key, value] pairs, records as lists of their fields.

    python avro.py read FILE
    python avro.py copy IN OUT CODEC

The copy mode reads IN and writes its records to OUT with fastavro's own
writer, with the same schema and the codec given, for etld to read back.
"""
import datetime
import json
import math
import struct
import sys

import fastavro

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def micros(delta):
    return delta // datetime.timedelta(microseconds=1)


def norm(v, t):
    if isinstance(t, list):  # a union: etld's are [null, T]
        if v is None:
            return None
        branches = [b for b in t if b != "null"]
        return norm(v, branches[0])
    if isinstance(t, str):
        t = {"type": t}
    kind, logical = t["type"], t.get("logicalType")
    if isinstance(kind, (dict, list)):
        return norm(v, kind)
    if v is None:
        return None
    if logical == "decimal":
        sign, digits, exp = v.as_tuple()
        n = int("".join(map(str, digits)) or "0") * 10 ** (exp + t.get("scale", 0))
        return str(-n if sign else n)
    if logical == "date":
        return str((v - datetime.date(1970, 1, 1)).days)
    if logical in ("time-millis", "time-micros"):
        return str(((v.hour * 60 + v.minute) * 60 + v.second) * 1000000 + v.microsecond)
    if logical in ("timestamp-millis", "timestamp-micros"):
        return str(micros(v - EPOCH))
    if kind == "boolean":
        return v
    if kind in ("int", "long"):
        return str(v)
    if kind in ("float", "double"):
        f = float(v)
        if math.isnan(f):
            return "nan"
        return struct.pack(">d", f).hex()
    if kind == "string":
        return v
    if kind in ("bytes", "fixed"):
        return v.hex()
    if kind == "array":
        return [norm(x, t["items"]) for x in v]
    if kind == "map":
        return [[k, norm(x, t["values"])] for k, x in v.items()]
    if kind == "record":
        return [norm(v[f["name"]], f["type"]) for f in t["fields"]]
    raise SystemExit(f"no rendering of {t}")


def main():
    mode = sys.argv[1]
    with open(sys.argv[2], "rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        if mode == "read":
            for rec in reader:
                print(json.dumps(norm(rec, schema)))
            return
        records = list(reader)
    with open(sys.argv[3], "wb") as out:
        fastavro.writer(out, schema, records, codec=sys.argv[4])


main()
