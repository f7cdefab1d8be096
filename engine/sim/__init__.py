"""Deterministic simulation: virtual time, a seeded scheduler, and seeded randomness.

Nothing in the engine reads the wall clock or the global `random` module; everything that is
timed or random goes through here, so one seed and one command list replay exactly.
"""
from engine.sim.rng import RandomTree
from engine.sim.scheduler import Scheduler

__all__ = ["RandomTree", "Scheduler"]
