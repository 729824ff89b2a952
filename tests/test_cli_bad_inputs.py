"""Every CLI command on bad input: a message and the documented exit code (docs/exit-codes.md),
never a Python traceback. The dry-run and training commands get inputs that fail before any
process starts."""
from __future__ import annotations

import pytest

from msinspect.cli import COMMANDS
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
OK, FINDING, BAD_INPUT = 0, 1, 2


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    """The bad inputs, by name."""
    root = tmp_path_factory.mktemp("bad")
    (root / "empty").mkdir()
    (root / "blob.ir").write_bytes(bytes(range(256)) * 8)       # binary, with an IR name
    (root / "blob.bin").write_bytes(bytes(range(256)) * 8)      # binary, any name
    for rank in (0, 1):                                         # a folder of garbage .ir
        (root / "garbage" / f"rank_{rank}").mkdir(parents=True)
        (root / "garbage" / f"rank_{rank}" / "step_parallel_end_0001.ir").write_text("hello\n%1 = ???\n")
    (root / "bad.toml").write_text('[job]\nranks = "eight"\n[[expect.strategy]]\nop = "matmul"\nin_strategy = [[2]]\n')
    (root / "ok.toml").write_text('[[expect.strategy]]\nop = "matmul"\nin_strategy = [[2, 4], [4, 1]]\n')
    (root / "spec_folder.toml").mkdir()
    (root / "script.py").write_text("print('never run')\n")
    (root / "src").mkdir()
    (root / "src" / "step_parallel_end_0001.ir").write_text("# IR\n")
    return root


CASES = [
    # (command, arguments with {} for the bad-input folder, exit code)
    ("parse", ["{}/nowhere"], BAD_INPUT), ("parse", ["{}/empty"], BAD_INPUT),
    ("parse", ["{}/blob.bin"], BAD_INPUT), ("parse", ["{}/blob.ir"], FINDING),
    ("parse", ["{}/garbage", "--jobs", "1"], FINDING),
    *[(cmd, args, code) for cmd in ("summary", "strategies", "comm", "shapes") for args, code in (
        (["{}/nowhere"], BAD_INPUT), (["{}/empty"], BAD_INPUT), (["{}/blob.bin"], BAD_INPUT),
        (["{}/blob.ir"], FINDING), (["{}/garbage", "--jobs", "1"], FINDING),
        ([str(SP), "--stage", "no_such_stage"], BAD_INPUT))],
    ("diff", ["{}/nowhere", str(SP / "rank_0")], BAD_INPUT), ("diff", ["{}/empty", "{}/empty"], BAD_INPUT),
    ("diff", [str(SP), str(SP / "rank_0")], BAD_INPUT),
    pytest.param("diff", ["{}/blob.ir", "{}/blob.ir"], FINDING),
    pytest.param("diff", ["{}/garbage/rank_0", "{}/garbage/rank_1"], FINDING),
    ("check", ["{}/bad.toml", str(SP)], BAD_INPUT), ("check", ["{}/spec_folder.toml", str(SP)], BAD_INPUT),
    ("check", ["{}/blob.bin", str(SP)], BAD_INPUT), ("check", ["{}/nowhere.toml", str(SP)], BAD_INPUT),
    ("check", ["{}/ok.toml", "{}/nowhere"], BAD_INPUT), ("check", ["{}/ok.toml", "{}/empty"], BAD_INPUT),
    ("check", ["{}/ok.toml", "{}/blob.ir"], FINDING),
    ("render", ["{}/nowhere"], BAD_INPUT), ("render", ["{}/empty"], BAD_INPUT), ("render", ["{}/blob.bin"], BAD_INPUT),
    ("render", ["{}/blob.ir"], FINDING), ("render", ["{}/garbage"], FINDING),
    ("render", [str(SP), "--rank", "99"], BAD_INPUT), ("render", [str(SP), "--op", "no_such_op"], BAD_INPUT),
    ("scrub", ["{}/nowhere", "{}/out"], BAD_INPUT), ("scrub", ["{}/empty", "{}/out"], BAD_INPUT),
    ("scrub", ["{}/blob.ir", "{}/out"], BAD_INPUT), ("scrub", ["{}/src", "{}/src/inside"], BAD_INPUT),
    ("scrub", ["{}/src", "{}/empty"], BAD_INPUT),
    ("cache", ["nonsense"], BAD_INPUT), ("cache", ["clear", "--bogus"], BAD_INPUT),
    ("dryrun", ["{}/nowhere.py", "--ranks", "2"], BAD_INPUT), ("dryrun", ["{}/script.py", "--ranks", "0"], BAD_INPUT),
    ("dryrun", ["{}/script.py", "--ranks", "2", "--only", "x"], BAD_INPUT),
    ("dryrun", ["{}/script.py", "--ranks", "2", "--only", "9"], BAD_INPUT),
    ("dryrun", ["{}/blob.bin", "--ranks", "2", "--only", "0-99999999999"], BAD_INPUT),
    ("setup-dryrun", ["--bogus"], BAD_INPUT),
    ("train", ["no_such_mode"], BAD_INPUT), ("train", ["manual_parallel", "--spec", "{}/bad.toml"], BAD_INPUT),
    ("train", ["manual_parallel", "--spec", "{}/blob.bin"], BAD_INPUT),
    ("train", ["manual_parallel", "--spec", "{}/spec_folder.toml"], BAD_INPUT),
    ("train", ["all", "--spec", "{}/ok.toml"], BAD_INPUT), ("train", ["manual_parallel", "--ranks", "x"], BAD_INPUT),
    *[("train", ["manual_parallel", option, value], BAD_INPUT) for option, value in (
        ("--ranks", "0"), ("--epochs", "-1"), ("--batch-size", "0"), ("--num-samples", "0"), ("--timeout", "-5"),
        ("--jobs", "0"))],
    ("parse", [str(SP), "--jobs", "-1"], BAD_INPUT), ("summary", [str(SP), "--jobs", "0"], BAD_INPUT),
    ("render", [str(SP), "--depth", "-1"], BAD_INPUT), ("render", [str(SP), "--param", "no_such_weight"], BAD_INPUT),
    ("report", ["{}/nowhere"], BAD_INPUT), ("report", ["{}/empty"], BAD_INPUT), ("report", ["{}/blob.bin"], BAD_INPUT),
    ("report", ["{}/blob.ir"], FINDING), ("report", ["{}/garbage", "--jobs", "1"], FINDING),
    ("report", [str(SP), "--spec", "{}/bad.toml"], BAD_INPUT), ("report", [str(SP), "-o", "{}/empty"], BAD_INPUT),
    ("export", ["{}/nowhere"], BAD_INPUT), ("export", ["{}/blob.ir"], FINDING),
    ("export", [str(SP), "--rank", "99"], BAD_INPUT),
    ("view", ["{}/nowhere"], BAD_INPUT), ("view", [str(SP), "--rank", "99"], BAD_INPUT),
    ("explain", ["{}/nowhere", "matmul"], BAD_INPUT), ("explain", ["{}/blob.ir", "matmul"], FINDING),
    ("explain", [str(SP), "no_such_op"], BAD_INPUT), ("explain", [str(SP), "matmul", "--rank", "99"], BAD_INPUT),
    ("cost", ["{}/nowhere"], BAD_INPUT), ("cost", ["{}/blob.ir"], FINDING),
    ("cost", [str(SP), "--link", "fast"], BAD_INPUT), ("cost", [str(SP), "--by", "bogus"], BAD_INPUT),
    ("compare", ["{}/nowhere", str(SP)], BAD_INPUT),
    ("sweep", ["{}/nowhere.py", "--ranks", "2", "--grid", "MP=1,2"], BAD_INPUT),
    ("sweep", ["{}/script.py", "--ranks", "2", "--grid", "MP"], BAD_INPUT),
    ("sweep", ["{}/script.py", "--ranks", "2", "--grid", "MP=1", "--only", "9"], BAD_INPUT),
]


def _ids(case) -> str:
    values = case.values if hasattr(case, "values") else case
    return f"{values[0]} " + " ".join(a.replace("{}/", "").replace(str(FIXTURES) + "/", "") for a in values[1])


@pytest.mark.parametrize("command, args, code", CASES, ids=[_ids(c) for c in CASES])
def test_bad_input_gives_a_message_and_the_documented_exit_code(bad, command, args, code):
    run = msinspect(command, *(a.replace("{}", str(bad)) for a in args), cwd=bad)
    output = run.stdout + run.stderr
    assert "Traceback" not in output, output
    assert "internal error" not in output, output
    assert run.returncode == code, output
    assert "error" in run.stderr.lower(), output  # said in words


def test_every_command_is_tried():
    tried = {c.values[0] if hasattr(c, "values") else c[0] for c in CASES}
    assert tried == set(COMMANDS)
