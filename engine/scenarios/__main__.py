"""python -m engine.scenarios run FILE|NAME [--json] [--trace] [--data-dir DIR] | list"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile

from engine.events import Event
from engine.scenarios.runner import ScenarioError, builtin_names, load_scenario, run_scenario


def format_event(event: Event) -> str:
    data = event.to_dict()
    head = f"[{data.pop('time_ms'):>8} ms] #{data.pop('seq'):<5} {data.pop('kind')}"
    return head + " " + " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in data.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.scenarios")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="play a scenario file (or a built-in by name) into a fresh cluster")
    run.add_argument("scenario")
    run.add_argument("--json", action="store_true", help="print the final state as one JSON object")
    run.add_argument("--trace", action="store_true", help="print every event, one per line")
    run.add_argument("--data-dir", help="keep the cluster's files here (default: a temp dir, removed)")
    sub.add_parser("list", help="list the built-in scenarios")
    args = parser.parse_args(argv)

    if args.command == "list":
        for name in builtin_names():
            scenario = load_scenario(name)
            print(f"{name:32} {scenario.get('description', '').splitlines()[0] if scenario.get('description') else ''}")
        return 0

    trace_out = sys.stderr if args.json else sys.stdout
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="scenario-")
    try:
        scenario = load_scenario(args.scenario)
        cluster, result = run_scenario(
            scenario, data_dir, trace=(lambda e: print(format_event(e), file=trace_out)) if args.trace else None)
        cluster.close()
    except ScenarioError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(_summary(result))
    return 0


def _summary(result: dict) -> str:
    lines = [f"scenario {result['name']}: {result['events']} events, {result['time_ms']} ms of virtual time"]
    for b in result["brokers"]:
        role = " (controller)" if b["controller"] else ""
        lines.append(f"  broker {b['id']}: {'up' if b['alive'] else 'DOWN'}{role}")
    for p in result["partitions"]:
        lines.append(f"  {p['topic']}-{p['partition']}: leader {p['leader']} epoch {p['leader_epoch']} "
                     f"isr {p['isr']} HW {p['high_watermark']}")
        for replica, s in p["replica_states"].items():
            if not s.get("alive"):
                lines.append(f"    replica {replica}: down")
                continue
            values = [r["value"] for r in s.get("records", [])]
            lines.append(f"    replica {replica}: LEO {s['log_end_offset']} HW {s['high_watermark']} {values}")
    for r in result["produced"]:
        status = f"acked at offset {r['offset']}" if r["acked"] else f"FAILED {r['error']}"
        lines.append(f"  produced {r['value']!r} (acks={r['acks']}): {status}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
