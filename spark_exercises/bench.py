"""Spark reading a lab topic vs reading the same records from a JSON file, in the same run.

    python -m spark_exercises.bench [--records 1000000] [--json]

One lab cluster in this process (3 brokers, a 4-partition topic, RF 1) holds N records of 100
bytes; the read API serves it on a loopback port; Spark (local[*], or $SPARK_MASTER) reads it
with the `lab` source — `count()` and a `groupBy(partition).count()` — and reads the same records
written as JSON lines with `spark.read.json`. Each rate is records/s of wall-clock time for the
two actions; the ratio lab/json is the figure (target >= 0.5).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_exercises.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    scratch = tempfile.mkdtemp(prefix="spark-bench-")
    try:
        result = run(args.records, args.partitions, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(f"spark bench: {result['records']:,} records of 100 B, {args.partitions} partitions, "
              f"master {result['master']}\n"
              f"  lab source (count + groupBy)   {result['lab_rps']:>12,.0f} records/s\n"
              f"  spark.read.json (same)         {result['json_rps']:>12,.0f} records/s\n"
              f"  ratio lab/json                 {result['ratio']:.2f}   (target >= 0.50)")
    return 0


def run(n: int, partitions: int, scratch: str) -> dict:
    from pyspark.sql import SparkSession

    from engine import Cluster
    from engine.read_api_server import ReadApiServer
    from spark_exercises.datasource import register

    cluster = Cluster(3, os.path.join(scratch, "lab"), seed=1)
    cluster.create_topic("bench", partitions, 1)
    per_batch = 148
    pad = b"x" * 92
    json_path = os.path.join(scratch, "records.json")
    with open(json_path, "w") as out:
        for start in range(0, n, per_batch):
            batch = [(None, b"%08d" % i + pad) for i in range(start, min(start + per_batch, n))]
            p = (start // per_batch) % partitions
            cluster.produce_batch("bench", p, batch, acks=1)
            for _, value in batch:
                out.write(json.dumps({"value": value.decode(), "partition": p}) + "\n")
            if (start // per_batch) % 50 == 0:
                cluster.run_until_idle()
    cluster.run_until_idle()
    master = os.environ.get("SPARK_MASTER", "local[*]")
    spark = (SparkSession.builder.master(master).appName("kafka-lab-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    register(spark)
    try:
        with ReadApiServer(cluster, "bench") as server:
            lab = (spark.read.format("lab").option("lab.url", server.url).option("lab.session", "bench")
                   .option("subscribe", "bench").load())
            lab_s = _timed(lambda: (lab.count(), lab.groupBy("partition").count().collect()), n)
        js = spark.read.schema("value string, partition int").json(json_path)
        json_s = _timed(lambda: (js.count(), js.groupBy("partition").count().collect()), n)
    finally:
        spark.stop()
        cluster.close()
    return {"records": n, "master": master, "lab_rps": n / lab_s, "json_rps": n / json_s,
            "ratio": json_s / lab_s}


def _timed(action, n: int) -> float:
    counted, groups = action()  # warm-up run: Python workers, JIT, file cache
    if counted != n or sum(r["count"] for r in groups) != n:
        raise AssertionError(f"read {counted} records, expected {n}")
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
