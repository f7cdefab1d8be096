"""KRaft's consensus layer (KIP-595): the replicas of the `__cluster_metadata` quorum.

    config.py              QuorumConfig: controller.quorum.* and metadata.log.* under Kafka's names
    messages.py            Vote, BeginQuorumEpoch, EndQuorumEpoch and the Raft Fetch, request and answer
    quorum_state_store.py  the `quorum-state` file (FileQuorumStateStore) and ElectionState
    states.py              Unattached/Voted, Follower, Candidate, Leader, Resigned (one epoch each)
    replicated_log.py      the metadata log: segments + leader epoch cache (KafkaMetadataLog)
    control.py             the LeaderChangeMessage control record a new leader writes first
    listener.py            what the client tells the state machine above it (RaftClient.Listener)
    client.py              RaftClient: the state machine, its requests and its timers (KafkaRaftClient)

A low layer beside engine/replication: it uses storage, the node's context and the event bus, and
knows nothing of brokers, controllers or the facade. Pre-vote (KIP-996) is left out (client.py says
what that changes).
"""
