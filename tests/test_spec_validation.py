"""Bad specs are refused with "bad spec: FILE: what is wrong" and exit 2, before any dump is read:
binary files, folders, deep nesting, values of the wrong type or out of bounds."""
from __future__ import annotations

import pytest

from msinspect.spec import SpecError, load_spec
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
GOOD_ENTRY = '[[expect.strategy]]\nop = "matmul"\nin_strategy = [[2, 4], [4, 1]]\n'


def _write(tmp_path, content: str | bytes):
    path = tmp_path / "spec.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


BAD_SPECS = {
    # what a user may hand in -> a words of the message
    "binary": (bytes(range(256)) * 4, "not UTF-8 text"),
    "nested a thousand tables deep": ("x = " + "[" * 1000 + "]" * 1000 + "\n" + GOOD_ENTRY, "nested too deeply"),
    "nested a thousand inline tables deep": ("x = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n" + GOOD_ENTRY,
                                             "nested too deeply"),
    "ranks is a word": ('[job]\nranks = "eight"\n' + GOOD_ENTRY, "ranks must be an integer from 1 to"),
    "ranks is huge": ("[job]\nranks = 100000000\n" + GOOD_ENTRY, "ranks must be an integer from 1 to 100000"),
    "ranks is true": ("[job]\nranks = true\n" + GOOD_ENTRY, "ranks must be an integer"),
    "job is a number": ("job = 3\n" + GOOD_ENTRY, "job must be a table"),
    "expect is a number": ("expect = 3\n", "expect must hold tables"),
    "entry is a number": ("[expect]\nstrategy = [1, 2]\n", "expect.strategy[0]: must be a table"),
    "op is a number": ('[[expect.strategy]]\nop = 3\nin_strategy = [[2, 4]]\n', "op must be a string"),
    "entry ranks are words": (GOOD_ENTRY + 'ranks = ["zero"]\n', "ranks must be a non-empty list of rank numbers"),
    "entry rank out of bounds": (GOOD_ENTRY + "ranks = [100000000]\n", "ranks must be a non-empty list"),
    "min is a boolean": ('[[expect.count]]\nkind = "Send"\nranks = [0]\nmin = true\n', "min must be a non-negative"),
    "strategy of zeros": ('[[expect.strategy]]\nop = "matmul"\nin_strategy = [[0, 4]]\n', "positive integers"),
    "group rank out of bounds": ('[[expect.comm]]\nkind = "AllReduce"\nafter = "matmul"\ngroups = [[0, 100000000]]\n',
                                 "groups must hold rank numbers below"),
    "stage is a list": ('[job]\nstage = ["validate"]\n' + GOOD_ENTRY, "stage must be a string"),
    "unknown job key": ('[job]\nrank = 8\n' + GOOD_ENTRY, "job: unknown key(s) rank"),
}


@pytest.mark.parametrize("case", list(BAD_SPECS))
def test_bad_spec_is_refused_with_its_reason(tmp_path, case):
    content, words = BAD_SPECS[case]
    spec = _write(tmp_path, content)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    message = str(info.value)
    assert message.startswith(f"bad spec: {spec}: ") and words in message


def test_a_folder_is_not_a_spec(tmp_path):
    with pytest.raises(SpecError, match="is a folder"):
        load_spec(tmp_path)


@pytest.mark.parametrize("case", ["binary", "nested a thousand tables deep", "ranks is a word", "ranks is huge"])
def test_check_command_says_bad_spec_and_exits_2(tmp_path, case):
    content, words = BAD_SPECS[case]
    run = msinspect("check", _write(tmp_path, content), SP, "--jobs", "1")
    assert run.returncode == 2, run.stderr
    assert "bad spec:" in run.stderr and words in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_check_command_on_a_folder_spec(tmp_path):
    run = msinspect("check", tmp_path, SP, "--jobs", "1")
    assert run.returncode == 2 and "bad spec:" in run.stderr and "is a folder" in run.stderr
    assert "Traceback" not in run.stderr


def test_good_values_still_pass(tmp_path):
    spec = load_spec(_write(tmp_path, "[job]\nranks = 8\nstage = \"validate\"\n" + GOOD_ENTRY + "ranks = [0, 7]\n"))
    assert spec.ranks == 8 and spec.expectations[0].ranks == (0, 7)
