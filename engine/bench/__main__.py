"""python -m engine.bench NAME [--json] [options]"""
from __future__ import annotations

import argparse
import json
import sys

from engine.bench import checkpoint_bench, clients_bench, cluster_bench, compression_bench, log_bench

BENCHES = {"log": log_bench, "cluster": cluster_bench, "clients": clients_bench, "checkpoint": checkpoint_bench,
           "compression": compression_bench}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.bench", description=__doc__)
    sub = parser.add_subparsers(dest="bench", required=True)
    for name, module in BENCHES.items():
        p = sub.add_parser(name, help=(module.__doc__ or name).strip().splitlines()[0])
        module.add_arguments(p)
        p.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    module = BENCHES[args.bench]
    result = module.run(args)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(module.report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
