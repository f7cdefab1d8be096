"""Read-only views of a whole cluster, above the facade: what a scenario's result, the lab's page and the
tools show of it, read from the live engine objects and never changing them.

cluster.py: the partitions, replicas, brokers, sends and groups in the scenario runner's JSON shape
(`cluster_state`), and each replica's view, shared with the lab's snapshot (`replica_states`).
groups.py: what `kafka-consumer-groups --describe` shows, and what the lab's consumers received.
"""
