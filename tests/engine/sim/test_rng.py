"""RandomTree: one root seed, one independent and reproducible random stream per name."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from engine.sim import RandomTree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _draws(rng, n: int = 5) -> list[float]:
    return [rng.random() for _ in range(n)]


def test_it_gives_the_same_numbers_for_the_same_seed_and_name():
    assert _draws(RandomTree(7).fork("network")) == _draws(RandomTree(7).fork("network"))


def test_it_gives_different_numbers_for_different_names():
    tree = RandomTree(7)
    assert _draws(tree.fork("network")) != _draws(tree.fork("assignment"))


def test_it_gives_different_numbers_for_different_seeds():
    assert _draws(RandomTree(7).fork("network")) != _draws(RandomTree(8).fork("network"))


def test_it_keeps_forks_independent_of_each_other():
    tree = RandomTree(2024)
    network, assignment = tree.fork("network"), tree.fork("assignment")
    _draws(network, 1000)  # a busy network must not shift what the assignment draws
    assert _draws(assignment) == _draws(RandomTree(2024).fork("assignment"))


def test_it_does_not_touch_the_global_random_module():
    import random

    random.seed(1)
    expected = random.random()
    random.seed(1)
    _draws(RandomTree(5).fork("network"), 100)
    assert random.random() == expected


def test_it_gives_the_same_numbers_in_another_process_with_another_hash_seed():
    here = {name: _draws(RandomTree(99).fork(name)) + [RandomTree(99).fork(name).randrange(1000)]
            for name in ("network", "assignment")}
    code = ("import json\n"
            "from engine.sim import RandomTree\n"
            "out = {}\n"
            "for name in ('network', 'assignment'):\n"
            "    rng = RandomTree(99).fork(name)\n"
            "    out[name] = [rng.random() for _ in range(5)] + [RandomTree(99).fork(name).randrange(1000)]\n"
            "print(json.dumps(out))\n")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True, timeout=30)
    assert json.loads(result.stdout) == here
