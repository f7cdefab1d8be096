"""kafka-metadata-quorum describe --status | --replication, and init --metadata kraft."""
from __future__ import annotations

import io

from engine import cli


def run(data_dir, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--data-dir", str(data_dir)], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_kraft_cluster_describes_its_quorum(tmp_path):
    code, out, _ = run(tmp_path / "c", "init", "--metadata", "kraft")
    assert code == 0 and "KRaft" in out
    code, out, _ = run(tmp_path / "c", "kafka-metadata-quorum", "describe", "--status")
    assert code == 0
    fields = dict(line.split(":", 1) for line in out.strip().splitlines())
    assert int(fields["LeaderId"]) in (1, 2, 3) and int(fields["LeaderEpoch"]) >= 1
    assert int(fields["HighWatermark"]) > 0 and fields["CurrentVoters"].strip() == "[1,2,3]"
    code, out, _ = run(tmp_path / "c", "kafka-metadata-quorum.sh", "describe", "--replication")
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert code == 0 and sorted(int(r[0]) for r in rows) == [1, 2, 3]
    assert [r[3] for r in rows].count("Leader") == 1 and all(r[2] == "0" for r in rows)


def test_zookeeper_mode_has_no_quorum_to_describe(tmp_path):
    run(tmp_path / "z", "init")
    code, out, err = run(tmp_path / "z", "kafka-metadata-quorum", "describe", "--status")
    assert code == 1 and "ZooKeeper mode" in err and out == ""
