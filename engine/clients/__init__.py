"""Client-side algorithms of the Java producer, as pure functions: key hashing and partitioning.

Nothing here does I/O or reads a clock; randomness comes in as an injected `random.Random`.
"""
