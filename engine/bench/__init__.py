"""Benchmarks: `python -m engine.bench log|…`. Each prints its rates beside a baseline measured
in the same run on the same machine (a raw file write/read of the same bytes), because the
ratio is the figure that means something on a shared, noisy machine."""
