"""A digest of what every built-in scenario does: its event stream and the files it leaves.

The engine is deterministic (one seed + the same steps give the same events and bytes), so a
refactor that only moves code must leave these digests unchanged. `tests/engine/scenarios/
test_scenario_digests.py` compares them with `scenario_digests.json`; a change that is a bug fix
updates the file knowingly (`python -m engine.tools.scenario_digest --write`) and names the fix in
its commit.

Covered: every built-in scenario (`engine/scenarios/builtin/`) and every Spark exercise's own
scenario (`spark_exercises/exercises/*/scenario.json`), whose expected answers depend on the
same event order.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys
import tempfile

from engine.scenarios.runner import builtin_names, load_scenario, run_scenario

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIGEST_FILE = os.path.join(ROOT, "tests", "engine", "scenarios", "scenario_digests.json")


def scenario_paths() -> dict[str, str]:
    """Name → scenario (a built-in's name or an exercise scenario's path)."""
    found = {name: name for name in builtin_names()}
    for path in sorted(glob.glob(os.path.join(ROOT, "spark_exercises", "exercises", "*", "scenario.json"))):
        found["exercise:" + os.path.basename(os.path.dirname(path))] = path
    return found


def digest(name_or_path: str) -> dict[str, str]:
    """`events`: sha256 over every event's JSON, in order; `files`: over each file's path and bytes."""
    scenario = load_scenario(name_or_path)
    events = hashlib.sha256()
    count = 0

    def trace(event) -> None:
        nonlocal count
        count += 1
        events.update(json.dumps(event.to_dict(), sort_keys=True, default=repr).encode())
        events.update(b"\n")

    with tempfile.TemporaryDirectory(prefix="kafka-lab-digest-") as data_dir:
        cluster, _result = run_scenario(scenario, data_dir, trace=trace)
        files = hashlib.sha256()
        for folder, _dirs, names in sorted(os.walk(data_dir)):
            for name in sorted(names):
                path = os.path.join(folder, name)
                files.update(os.path.relpath(path, data_dir).encode() + b"\0")
                with open(path, "rb") as f:
                    files.update(f.read())
                files.update(b"\0")
        close = getattr(cluster, "close", None)
        if close is not None:
            close()
    return {"events": f"{count}:{events.hexdigest()[:24]}", "files": files.hexdigest()[:24]}


def all_digests() -> dict[str, dict[str, str]]:
    return {name: digest(source) for name, source in scenario_paths().items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {os.path.relpath(DIGEST_FILE, ROOT)}")
    args = parser.parse_args(argv)
    digests = all_digests()
    text = json.dumps(digests, indent=1, sort_keys=True) + "\n"
    if args.write:
        with open(DIGEST_FILE, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
