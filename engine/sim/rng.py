"""Seeded randomness handed out by name.

One root seed gives every part of the engine its own `random.Random` (`tree.fork("network")`),
derived from the seed and the name with SHA-256. Forks do not disturb each other: adding a
random choice in one part does not change the numbers another part draws.
"""
from __future__ import annotations

import hashlib
import random


class RandomTree:
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def fork(self, name: str) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}/{name}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))
