"""Client-side code: what Kafka's Java clients compute and send.

hashing.py and partitioner.py are pure (no I/O, no clock; randomness comes in as an injected
`random.Random`) and reproduce the Java producer bit for bit: murmur2 key hashing, the sticky and
round-robin null-key partitioners, and Java's String.hashCode / HashMap order.
lab_client_partitioner.py makes the same choice for the lab's own client (`Cluster.produce`, which
sends every record alone): Kafka's default sticky partitioner unless round robin is asked for.
"""
