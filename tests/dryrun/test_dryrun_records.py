"""The dry run keeps MindSpore's own record of its layouts for every compiled rank, without
editing the script (msinspect.dryrun.bootstrap): one short run (4 simulated ranks, rank 0 run,
about 15 s) of an ``AutoParallel`` cell that saves its own JSON strategy checkpoint and operator
strategy file, and names no group checkpoint.

The run of a script that sets no record file of its own (global context, ``Model.train``) is the
seed 002 run's (tests/dryrun/test_dryrun_seed_runs.py); the files of zoo 01 and 04 are
fixtures/records/ (tests/mindspore/test_records.py)."""
from __future__ import annotations

import json

from dryrun_helpers import NETS

OWN = NETS / "own_records.py"


def test_the_scripts_own_records_are_left_alone_and_the_rest_recorded(dryrun_env, runs_root, tmp_path):
    from msinspect.dryrun import run_dryrun
    from msinspect.mindspore.records import agree, read_strategy_checkpoint, read_strategy_json, record_of

    report = run_dryrun(OWN, 4, only=[0], out_root=runs_root, jobs=1, environment=dryrun_env, timeout=300,
                        script_args=[str(tmp_path)])
    assert report.ok, [r.reason for r in report.failed]
    folder = report.rank(0).ir_dir
    own = tmp_path / "strategy_0.json"
    # the script's files where it put them; no strategy checkpoint of the dry run's beside them
    assert sorted(p.name for p in tmp_path.iterdir()) == ["operators_0.json", "strategy_0.json"]
    assert not (folder / "strategy_0.ckpt").exists()
    record = json.loads((report.run_dir / "config.json").read_text())
    assert record["records"] == {"0": ["group_info_0.pb", "parameter_layout_0.json"]}
    assert record["script_records"] == {"0": [f"strategy checkpoint: {own}"]}
    assert record["record_failures"] == {}
    log = report.rank(0).log.read_text()
    assert "msinspect dry run: recorded parameter_layout_0.json group_info_0.pb" in log

    ranks = record_of(folder)
    layout = ranks.layouts[0]
    assert (layout.rank, layout.rank_size, layout.compile, layout.parallel_mode) == (0, 4, 0, "auto_parallel")
    assert layout.strategy_checkpoint == str(own)
    checkpoint = read_strategy_checkpoint(own)
    assert set(checkpoint.weights) == {"w1", "w2", "moments.w1", "moments.w2"}  # all parameters, as asked
    for name, weight in checkpoint.weights.items():
        assert agree(layout.weights[name], weight, ranks.groups[0].groups) == [], name
    assert layout.weights["w1"].opt_sharded and ranks.groups[0].groups[layout.weights["w1"].opt_shard_group] == (0, 2)
    assert len(read_strategy_json(tmp_path / "operators_0.json").operators) == 8
