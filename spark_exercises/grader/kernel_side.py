"""Runs INSIDE the learner's kernel after the notebook: prints the answer variables as JSON.

The grader sends this file's source to the kernel, then calls `_kafka_lab_export(names, limit)`.
Nothing here imports pyspark, pandas or numpy: values are recognised by their type's module and
name, so a notebook that never imported them costs nothing. The output is one line on stdout:
MARKER followed by {name: {"defined": bool, "type": str, "value": ..., "error": str}}.

Encoding, undone by `decode` on the grader's side: a dict becomes {"__items__": [[key, value], ...]}
so that int and tuple keys survive JSON; a tuple or a set becomes a list; a DataFrame becomes a list
of row dicts (at most `limit` rows; a streaming DataFrame is refused: read its sink instead); a Row
a dict; bytes a str (UTF-8); dates and times ISO strings; numpy and Decimal numbers plain numbers.
"""
import json as _json

MARKER = "@@kafka-lab-answers@@"


class _Unreadable(Exception):
    """A value the grader will not read; the message says why, in the learner's terms."""


def _kafka_lab_plain(value, limit, depth=0):
    if depth > 20:
        raise _Unreadable("is nested too deeply")
    kind = type(value)
    module, name = kind.__module__ or "", kind.__name__
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {"__items__": [[_kafka_lab_plain(k, limit, depth + 1), _kafka_lab_plain(v, limit, depth + 1)]
                              for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_kafka_lab_plain(v, limit, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [_kafka_lab_plain(v, limit, depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if module.startswith("pyspark") and name == "DataFrame":
        if value.isStreaming:
            raise _Unreadable("is a streaming DataFrame: write it to a sink and read the sink back")
        rows = value.limit(limit + 1).collect()
        if len(rows) > limit:
            raise _Unreadable(f"has more than {limit} rows")
        return [{str(k): _kafka_lab_plain(v, limit, depth + 1) for k, v in r.asDict(recursive=True).items()}
                for r in rows]
    if module.startswith("pyspark") and name == "Row":
        return {str(k): _kafka_lab_plain(v, limit, depth + 1) for k, v in value.asDict(recursive=True).items()}
    if module.startswith("pandas") and name == "DataFrame":
        if len(value) > limit:
            raise _Unreadable(f"has more than {limit} rows")
        return [{str(k): _kafka_lab_plain(v, limit, depth + 1) for k, v in row.items()}
                for row in value.to_dict("records")]
    if module.startswith("pandas") and name == "Series":
        return _kafka_lab_plain(value.to_dict(), limit, depth + 1)
    if module.startswith("numpy"):
        return _kafka_lab_plain(value.tolist() if hasattr(value, "tolist") else value.item(), limit, depth + 1)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if name == "Decimal":
        return float(value)
    raise _Unreadable(f"cannot be read by the grader (a {module}.{name}); use plain Python values or a DataFrame")


def _kafka_lab_export(names, limit):
    namespace = globals()
    out = {}
    for name in names:
        if name not in namespace:
            out[name] = {"defined": False}
            continue
        value = namespace[name]
        entry = {"defined": True, "type": type(value).__name__}
        try:
            entry["value"] = _kafka_lab_plain(value, limit)
        except _Unreadable as error:
            entry["error"] = str(error)
        except Exception as error:  # noqa: BLE001 (e.g. a DataFrame of a stopped SparkSession)
            first = (str(error).strip().splitlines() or [""])[0][:300]
            hint = "; is its SparkSession still running?" if type(value).__module__.startswith("pyspark") else ""
            entry["error"] = f"could not be read ({type(error).__name__}: {first}){hint}"
        out[name] = entry
    print(MARKER + _json.dumps(out, default=repr))


def decode(value):
    """The grader's side: undo the dict encoding (keys that were lists become tuples)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__items__"}:
            return {_key(decode(k)): decode(v) for k, v in value["__items__"]}
        return {k: decode(v) for k, v in value.items()}
    return value


def _key(value):
    return tuple(_key(v) for v in value) if isinstance(value, list) else value
