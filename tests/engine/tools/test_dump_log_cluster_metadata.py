"""kafka-dump-log --cluster-metadata-decoder on a KRaft __cluster_metadata-0 segment."""
from __future__ import annotations

import io
import json

from engine.metadata import records as r
from engine.storage import record_batch as rb
from engine.tools import dump_log

TOPIC_ID = "AAECAwQFBgcICQoLDA0ODw"


def _segment(tmp_path) -> str:
    """Three batches as a KRaft leader writes them: its LeaderChange control batch, a batch of
    metadata records, and a batch holding a value that is not a metadata record."""
    leader_change = r.LeaderChangeMessage(leader_id=1, voters=[r.LeaderChangeVoter(voter_id=1)],
                                          granting_voters=[r.LeaderChangeVoter(voter_id=1)])
    records = [r.FeatureLevelRecord(name="metadata.version", feature_level=25),
               r.TopicRecord(name="orders", topic_id=TOPIC_ID),
               r.PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=[1], isr=[1], leader=1,
                                 leader_epoch=0, partition_epoch=0, directories=[r.DIRECTORY_UNASSIGNED])]
    data = (rb.encode_batch([r.encode_control(leader_change)], base_offset=0, base_timestamp=1000,
                            partition_leader_epoch=1, is_control=True)
            + rb.encode_batch([(None, r.encode(record)) for record in records], base_offset=1,
                              base_timestamp=1001, partition_leader_epoch=1)
            + rb.encode_batch([(None, b"\x01\x02\x00\x80")], base_offset=4, base_timestamp=1002,
                              partition_leader_epoch=1))
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    path = directory / "00000000000000000000.log"
    path.write_bytes(data)
    return str(path)


def _dump(*argv: str) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    assert dump_log.main(list(argv), out=out, err=err) == 0
    assert err.getvalue() == ""
    return out.getvalue().splitlines()


def test_each_metadata_record_prints_as_kafkas_json_and_control_records_say_what_they_hold(tmp_path):
    lines = _dump("--files", _segment(tmp_path), "--cluster-metadata-decoder")
    records = [line for line in lines if line.startswith("| offset:")]
    assert records[0].endswith(' LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
                               '"grantingVoters":[{"voterId":1}]}')
    assert "payload" not in records[0]                   # a control record has no payload line
    payloads = [json.loads(line.split(" payload: ", 1)[1]) for line in records[1:4]]
    assert [p["type"] for p in payloads] == ["FEATURE_LEVEL_RECORD", "TOPIC_RECORD", "PARTITION_RECORD"]
    assert records[2].endswith(' payload: {"type":"TOPIC_RECORD","version":0,'
                               '"data":{"name":"orders","topicId":"AAECAwQFBgcICQoLDA0ODw"}}')
    assert payloads[2]["data"]["replicas"] == [1] and payloads[2]["version"] == 2
    assert " key: " not in records[2]                    # metadata records have no keys
    assert records[4].endswith("payload: Error at 4, skipping. TopicRecord.name at offset 3: "
                               "truncated inside an unsigned varint")


def test_without_the_decoder_the_output_is_unchanged(tmp_path):
    path = _segment(tmp_path)
    lines = _dump("--files", path, "--print-data-log")
    assert not any('"type"' in line or "LeaderChange" in line for line in lines)
    with open(path, "rb") as f:
        data = f.read()
    header = rb.read_batch_header(data, 0)
    _, records = rb.decode_batch(data, 0)
    assert lines[3] == dump_log.record_line(records[0], header, True)
    assert lines[3].endswith("key: \x00\x00\x00\x02 payload: \x00\x00\x00\x00\x00\x01\x02\x00\x00\x00\x01\x00\x02"
                             "\x00\x00\x00\x01\x00\x00")


def test_end_transaction_markers_and_unknown_control_types_print_as_kafka_prints_them():
    header = rb.read_batch_header(rb.encode_batch([(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07")],
                                                  base_timestamp=0, producer_id=5, is_transactional=True,
                                                  is_control=True), 0)
    commit = rb.Record(0, 0, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07")
    assert dump_log.record_line(commit, header, True, cluster_metadata=True).endswith(
        " endTxnMarker: COMMIT coordinatorEpoch: 7")
    unknown = rb.Record(1, 0, b"\x00\x00\x00\x09", b"")
    assert dump_log.record_line(unknown, header, True, cluster_metadata=True).endswith(" controlType: UNKNOWN(9)")
