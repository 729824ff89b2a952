"""Mutation run over msinspect/mindspore/ (MindSpore's facts): does every rule have a test that fails
when the rule changes?

mutmut 3 (``pip install mutmut``, the ``dev`` extra) plants one change at a time in
``msinspect/mindspore/``'s files (:data:`FILES`: an operator, a constant, a comparison, a
returned value) and runs the fast tests that read the package (:data:`TESTS`) on each. A mutant
is *killed* when a test fails, *survived* when every test passes, *timed out* when the tests run
far longer than without it. A survivor is either a rule no test holds (write one) or a change that
cannot alter any output: those are named in :data:`KNOWN_EQUIVALENT`, one reason each, and the
table counts them apart.

The run works on a copy of the working tree under ``--work`` (``/tmp/msinspect-mutation`` by
default): mutmut writes its ``mutants/`` folder and its caches there, never in the repository, and
other checkouts' tests never see a mutant. mutmut does not mutate decorated functions, and every
layout rule is registered by a decorator (``@rule``) and several records' answers are properties;
the copy has each decorator applied after its function instead (``f = rule(...)(f)``), which
registers the same function, so that mutmut mutates them too.

Run it niced, one worker (two cores are shared)::

    nice -n 19 python bench/mutation_mindspore.py            # every file
    nice -n 19 python bench/mutation_mindspore.py layouts.py # one

It prints, per file, the mutants made, killed, survived (known equivalent apart) and timed out,
then each survivor's function, line in the repository's file and the change. Exit 1 while a
survivor is not in :data:`KNOWN_EQUIVALENT`.

Each run writes its survivors' mutmut names, one a line, to ``survivors.txt`` in its ``--work``
folder. After new tests, rerun only those (fnmatch patterns allowed, so that a function whose
mutants were renumbered by a change can be named whole), in a folder of their own so that the list
stays::

    nice -n 19 python bench/mutation_mindspore.py --work WORK2 --mutants WORK/survivors.txt

Measured 2026-11-29, 2 cores shared with three other sessions, ``nice -n 19``, one worker, mutmut
3.8.1: 2,095 mutants (layouts.py 1,021, records.py 1,074), about 35 a minute (a whole run about an
hour). The first run was stopped after 33 minutes at 1,200:

==========  =====  =======  ======  =====================  =========  ========  ===========
file        made   checked  killed  survived (equivalent)  timed out  no tests  not checked
==========  =====  =======  ======  =====================  =========  ========  ===========
layouts.py  1,021  814      473     273 (16)               15         53        207
records.py  1,074  386      239     128 (0)                19         0         688
==========  =====  =======  ======  =====================  =========  ========  ===========

One survivor was a wrong rule (a hand-split Gather's indices, fixed). New tests
(tests/mindspore/test_layout_rules_whole.py, test_records_json_fields.py, test_records_answers.py),
then the survivors rerun by name (with every mutant of ``_gather``, renumbered by the fix, and of
the two rules no test had read):

- rerun 1, 592 mutants (4.0 min): layouts.py 464, of which 410 killed, 39 survived, 15 equivalent;
  records.py 128, of which 127 killed, 1 survived;
- rerun 2 of those 55 after more tests (2.3 min): 29 killed, 26 named in :data:`KNOWN_EQUIVALENT`,
  none survived.

So every mutant the first run checked is killed, timed out (34: the tests ran past mutmut's limit)
or named equivalent. The 207 layouts.py mutants the first run had not reached, run next (3.8 min):
188 killed, 19 survived; after tests for 16 of them and 3 named equivalent, their rerun (3.5 min)
left none. So every layouts.py mutant is killed, timed out (15) or one of the 29 named equivalent.
records.py's 688 the first run had not reached, run next (13.6 min): 519 killed, 169 survived;
after tests for them (test_records_answers.py), their rerun (5.4 min) killed 99 and left 70. After
tests on real records for those (test_records_rules.py: the layout file's header, a dimension cut
by two of three device axes in the UT port of test_layout_extend_moe, a merged pipeline
checkpoint, the read errors' exact words, fields of another kind inside an operator, protobuf
before 6.31) and 4 named equivalent, their rerun (5.6 min) killed 66 and left none. So every
records.py mutant is killed, timed out (19) or one of the 4 named equivalent.

vocabulary.py and comm_groups.py joined the package later that day (the sixth session): their first
run (18.5 min) made 376 and 294 mutants, killed 107 and 242, left 190 (and 79 with no test) and
52; with the golden analyses and tests/mindspore/test_wire_bytes.py added, the survivors' rerun
(5.5 min) killed 35 more and left 156 and 51 (docs/performance.md). Tests on real nodes and group
names (tests/mindspore/test_vocabulary_rules.py, test_infer_rules.py, test_comm_groups_rules.py)
found two wrong infer rules (a dynamic dimension gathered to -4; AlltoAll axes past the shape
wrapped round: both fixed) and checks in comm_groups that could not change an answer (removed).
The 207 survivors and the 79 with no test, with every mutant of the functions changed, 385 named
(``--work /tmp/mut_x1 --mutants LIST``, 5.2 min): 365 killed, 20 left; after three more tests and
15 named in :data:`KNOWN_EQUIVALENT`, their rerun (``--work /tmp/mut_x2 --mutants
/tmp/mut_x1/survivors.txt``, 2.3 min): 5 killed, 15 equivalent, none left. A whole run of both
files then (``nice -n 19 python bench/mutation_mindspore.py vocabulary.py comm_groups.py --work
/tmp/mut_x3``, 7.0 min): vocabulary.py 392 made, 380 killed, 12 equivalent; comm_groups.py 268,
265 killed, 3 equivalent; none survived, none timed out.

infer_shapes.py, naming.py and dtypes.py joined the package later that day. Their first run
(``nice -n 19 python bench/mutation_mindspore.py infer_shapes.py naming.py dtypes.py --work
/tmp/mut_y1``, 4.5 min) made 288, 29 and 7 mutants, killed 259, 24 and 5, and left 29, 5 and 2.
Tests on real operands and names (tests/mindspore/test_infer_shapes_rules.py, test_naming_rules.py,
test_dtypes.py: zoo 20's nd_tp Split and MatMul, zoo 16's Cast to a computed type, zoo 13's Send
dtype, zoo 20's hashed and zoo 04's ``-opN`` names, zoo 11's subgraph calls) found two wrong infer
rules: a MatMul whose transpose flags the IR does not state as constants was taken as untransposed,
and a Split's, Concat's, Gather's or ExpandDims' axis past the dimensions wrapped round where
MindSpore refuses it; both give None now (``msinspect comm --stage step_parallel_end --json`` over
every zoo dump byte-identical before and after). The 36 survivors with every mutant of
output_shape (rewritten) and of the new _axis, 38 names (``--work /tmp/mut_y2 --mutants LIST``,
2.6 min): 193 killed, 3 named in :data:`KNOWN_EQUIVALENT`, none left. A whole run of the three
then (``... infer_shapes.py naming.py dtypes.py --work /tmp/mut_y3``, 3.5 min): infer_shapes.py 294
made, 293 killed, 1 equivalent; naming.py 29, 28 killed, 1 equivalent; dtypes.py 7, 6 killed, 1
equivalent; none survived, none timed out.

2026-11-30: naming.py gained the parameter prefixes (``ACCUMULATED``, ``STATE_PREFIXES``,
``weight_in``, ``state_of``) and the optimizer cell's scope (``optimizer_cell``). Its run
(``naming.py --work /tmp/mut_n``, with tests/mindspore/test_param_naming_rules.py and
tests/analysis/test_memory_adamw.py): 75 made, 70 killed, 4 survived; a test of a wrapper cell's
name before the state's prefix killed one, three are named equivalent (``rsplit``'s last part
whatever it splits before it; ``"XXXX"`` for an empty scope). Rerun (``--work /tmp/mut_n2``, 2.2
min): 75 made, 71 killed, 4 equivalent, none survived, none timed out. With ``with_states`` (the
one rule of the weights an optimizer cloned states of), ``--work /tmp/mut_n3``, 1.9 min: 83 made,
79 killed, 4 equivalent, none survived.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path("msinspect/mindspore")
FILES = ("layouts.py", "records.py", "vocabulary.py", "comm_groups.py", "infer_shapes.py", "naming.py", "dtypes.py")

#: The fast tests that read the package: its own unit tests, one analysis test of the weight slices
#: the layouts give, the tests of the vocabulary's kinds and of the groups' names, the analyses'
#: golden files (bytes worked by hand), the bytes of the replacement graphs of zoo 20 and 16 (the
#: infer rules on real dumps) and the ``Type-N`` names of two dumps (each file well under a minute;
#: the zoo-wide ones take minutes).
TESTS = ("tests/mindspore/test_layouts.py", "tests/mindspore/test_layout_rules_whole.py",
         "tests/mindspore/test_records.py", "tests/mindspore/test_records_json_fields.py",
         "tests/mindspore/test_records_answers.py", "tests/mindspore/test_records_rules.py",
         "tests/analysis/test_params_at_end.py", "tests/analysis/test_comm_kinds.py", "tests/test_set_by_vocabulary.py",
         "tests/analysis/test_group_resolution.py", "tests/analysis/test_group_search.py",
         "tests/analysis/test_golden_analyses.py", "tests/mindspore/test_wire_bytes.py",
         "tests/mindspore/test_comm_groups_rules.py", "tests/mindspore/test_vocabulary_rules.py",
         "tests/mindspore/test_infer_rules.py", "tests/mindspore/test_infer_shapes.py",
         "tests/analysis/test_cost_nd_tp.py", "tests/analysis/test_cost_zoo16.py", "tests/analysis/test_type_names.py",
         "tests/analysis/test_file_view.py", "tests/mindspore/test_infer_shapes_rules.py",
         "tests/mindspore/test_naming_rules.py", "tests/mindspore/test_dtypes.py",
         "tests/mindspore/test_param_naming_rules.py", "tests/analysis/test_memory_adamw.py")

_UNUSED_WIDTH = "aligned_maps maps each input by its own length: its width argument is not read"
_FOUR_OPERANDS = "the operator takes four operands in 2.10 (Gather: param, indices, axis, batch_dims; MatMul: x, w, " \
                 "transpose_a, transpose_b): there is no fifth"
_TWO_INPUTS = "the operator's strategy has exactly two entries (ops_info CheckStrategy refuses any other)"
_FALSE = "None and False alike are false where the value is read"
_NO_CUT = "with no input cut every map entry is -1 whatever the axis holds"
_WIDER = "a larger stride only adds lists reaching past the world's ends, which the membership test drops"
_ZERO = "a dimension of 0 times or divided by the count is 0, as kept"
_SHORTCUT = "the lines after give False for equal words and for lengths two or more apart as well"
_NO_NAME = "with no instance name, \"XXXX\" holds none of the marks and prefixes the lines after look for, as \"\" does"
#: Survivors that cannot change any output, keyed by (file, function, the line as mutated): why.
KNOWN_EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("layouts.py", "_elementwise",
     "return Laid(tuple(widest), aligned_maps(call.in_strategy, None), right_aligned(width), (),"): _UNUSED_WIDTH,
    ("layouts.py", "_first_input",
     'return Laid(tuple(first), aligned_maps(call.in_strategy, None), None, (), f"{call.op}: its first input\'s cut")'):
        _UNUSED_WIDTH,
    ("layouts.py", "_elementwise", "width = max((len(s) for s in call.in_strategy), default=None)"):
        "None and 0 alike make the next line return None",
    ("layouts.py", "_strided_slice", "laid = _first_input(call, None)"): "_first_input does not read the devices",
    ("layouts.py", "_strided_slice",
     "masks, begin = call.operands[4:10], ints(call.operands[1]) if len(call.operands) > 1 else None"):
        "StridedSlice takes nine operands (x, begin, end, strides, five masks): there is no tenth",
    ("layouts.py", "_strided_slice",
     "masks, begin = call.operands[4:9], ints(call.operands[1]) if len(call.operands) > 2 else None"):
        "with two operands the masks are missing and the rule returns before begin is read",
    ("layouts.py", "_strided_slice",
     "masks, begin = call.operands[4:9], ints(call.operands[2]) if len(call.operands) > 1 else None"):
        "end has begin's length (StridedSlice checks begin, end and strides agree), and only the length is read",
    ("layouts.py", "_conv2d", "x, weight = call.in_strategy[:3]"): _TWO_INPUTS,
    ("layouts.py", "_gather", "table, indices = call.in_strategy[:3]"): _TWO_INPUTS,
    ("layouts.py", "_gather",
     "batch_dims = next((v for v in call.operands[3:5] if isinstance(v, int) and not isinstance(v, bool)), 0)"):
        _FOUR_OPERANDS,
    ("layouts.py", "_gather",
     "batch_dims = next((v for v in call.operands[3:4] if isinstance(v, int) and not isinstance(v, bool)), None)"):
        "None and 0 alike are false where batch_dims is read",
    ("layouts.py", "_gather", "rows = ints(manual) if (manual is not None) or True else None"):
        "ints(None) is None",
    ("layouts.py", "transpose", "flags = [v for v in self.operands[2:5] if isinstance(v, bool)]"): _FOUR_OPERANDS,
    ("layouts.py", "rule", "RULES[op] = None"):
        "the registry is filled at import, before mutmut switches a mutant on: no test can see it (an empty "
        "registry fails every layout test)",
    ("layouts.py", "_batch_parallel", "or any(s and s[0] not in (2, devices) for s in call.in_strategy):"):
        "Flatten has one input, whose first dimension the line before requires to be the stage's devices",
    ("layouts.py", "_batch_parallel",
     "maps = tuple(tuple(0 if j == 0 or p > 1 else -1 for j, p in enumerate(s)) for s in call.in_strategy)"):
        "the line before requires every dimension but the first to be 1",
    ("layouts.py", "_softmax_cross_entropy", "maps = aligned_maps(call.in_strategy, None)"): _UNUSED_WIDTH,
    ("layouts.py", "_reduce",
     'keep = next((v for v in call.operands[2:3] if isinstance(v, bool)), call.attr("keep_dims", None))'): _FALSE,
    ("layouts.py", "_reduce",
     'keep = next((v for v in call.operands[2:3] if isinstance(v, bool)), call.attr("keep_dims", ))'): _FALSE,
    ("layouts.py", "transpose", 'return (bool(self.attr("transpose_a", self.attr("transpose_x1", None))),'): _FALSE,
    ("layouts.py", "transpose", 'return (bool(self.attr("transpose_a", self.attr("transpose_x1", ))),'): _FALSE,
    ("layouts.py", "transpose", 'bool(self.attr("transpose_b", self.attr("transpose_x2", None))))'): _FALSE,
    ("layouts.py", "transpose", 'bool(self.attr("transpose_b", self.attr("transpose_x2", ))))'): _FALSE,
    ("layouts.py", "_virtual_dataset",
     "axis = len(widest) - 1 - widest.index(shard) if shard is not None else +1"): _NO_CUT,
    ("layouts.py", "_virtual_dataset",
     "axis = len(widest) - 1 - widest.index(shard) if shard is not None else -2"): _NO_CUT,
    ("layouts.py", "_gather",
     "and table[0] * indices[0] == devices and devices not in (table[0], indices[1])):"):
        "indices[1] is 1 here (the line before), and one device never gets here (a table whole along axis 0 is "
        "the normal mode)",
    ("layouts.py", "_gather",
     "batch_dims = next((v for v in call.operands[3:4] if isinstance(v, int) or not isinstance(v, bool)), 0)"):
        "batch_dims is an integer or not a constant (None, false alike), never a boolean",
    ("layouts.py", "on_devices", "used = prod(laid.matrix) if (laid.matrix) or True else 1"):
        "the product of no axes is 1 as well",
    ("layouts.py", "slice_by_map", "coord = Layout(tuple(matrix), None).coordinate(local_rank)"):
        "coordinate() reads the device matrix only",
    ("layouts.py", "standard", "out = [v - 1 if v > reverse else v for v in out]"):
        "no entry equals the removed axis but the one it cut, set to -1 just before: the axes removed earlier "
        "lie above it, so every other entry stays above it too",
    ("records.py", "_load_json", 'text = data.decode("UTF-8")'): "Python's codec names ignore case",
    ("records.py", "_number", "return int(match.group(1)) if match and match.group(1) else -2"):
        "only the order is read: a file without a number sorts before compile 0 with -1 as with -2",
    ("records.py", "_per_dimension",
     "if full is None or len(tensor_map) < len(full) or not isinstance(after, list) or len(after) != len(tensor_map):"):
        "a map as long as the shape groups one entry a dimension (its reshaped slice times its cut is the dimension), "
        "so the map comes back as it was",
    ("records.py", "_stage_and_name", 'stage, dash, rest = name.rpartition("-")'):
        "MindSpore's loader splits a merged name into two at its dash (param_name.split(\"-\")): a name it reads has "
        "one dash, whose first and last are the same",
    ("comm_groups.py", "std_hash", 'block = int.from_bytes(data[start:start + 9], "little")'):
        "a ninth byte lands at bit 64 and up, which the product's 64-bit mask drops",
    ("comm_groups.py", "strided_candidates", "for stride in range(1, (last + first) // (size - 1) + 1):"): _WIDER,
    ("comm_groups.py", "strided_candidates", "for stride in range(1, (last - first) // (size - 1) + 2):"): _WIDER,
    ("vocabulary.py", "_by_rule", "out[cut] = _scaled(out[cut], count, grow=None)"): _FALSE,
    ("vocabulary.py", "_scaled", "if dim <= 0:"): _ZERO,
    ("vocabulary.py", "_scaled", "if dim < 1:"): _ZERO,
    ("vocabulary.py", "_one_edit", "if a == b and abs(len(a) - len(b)) > 1:"): _SHORTCUT,
    ("vocabulary.py", "_one_edit", "if a == b or abs(len(a) - len(b)) > 2:"): _SHORTCUT,
    ("vocabulary.py", "check_kind",
     "close = [_BY_FOLD[m][0] for m in difflib.get_close_matches(folded, list(_BY_FOLD), cutoff=0.6)]"):
        "difflib.get_close_matches's n is 3 by default",
    ("vocabulary.py", "check_kind",
     "close = [_BY_FOLD[m][0] for m in difflib.get_close_matches(folded, list(_BY_FOLD), n=3, )]"):
        "difflib.get_close_matches's cutoff is 0.6 by default",
    ("vocabulary.py", "is_redistribution_step", 'name = node.instance_name or "XXXX"'): _NO_NAME,
    ("vocabulary.py", "kind_of", 'name = (node.instance_name or "XXXX").lower()'): _NO_NAME,
    ("vocabulary.py", "kind_of",
     'if name.startswith("forward_op_") or (node.instance_name or "XXXX").startswith(GLOBAL_NORM_PREFIX):'): _NO_NAME,
    ("vocabulary.py", "stands_in",
     'match = _REPLACEMENT_NAME.match(str(node.instance_name or "XXXX")) if node is not None else None'): _NO_NAME,
    ("vocabulary.py", "loss_scale_check", 'line = node.source_line or "XXXX"'):
        "a node with no source line is no call in loss_scale.py, with \"XXXX\" as with \"\"",
    ("infer_shapes.py", "output_shape", "flags = [v for v in operands[2:5] if isinstance(v, bool)]"): _FOUR_OPERANDS,
    ("dtypes.py", "element_bytes",
     "return ELEMENT_BYTES.get(LONG_DTYPES.get(dtype, dtype)) if (isinstance(dtype, str)) or True else None"):
        "every caller passes a name or None (Abstract.dtype, comm's _dtype_text), and None is no key of either "
        "table: None as the guard gives",
    ("naming.py", "optimizer_cell", 'found = _OPTIMIZER_CELL.search(scope or "XXXX")'):
        '"XXXX" holds no "optimizer-" part, as "" does not',
    ("naming.py", "state_of", 'prefix = name[:-len(weight) - 1].rsplit(".", )[-1]'):
        "rsplit's last part is the same whatever it splits before it",
    ("naming.py", "state_of", 'prefix = name[:-len(weight) - 1].rsplit(".", 2)[-1]'):
        "rsplit's last part is the same whatever it splits before it",
    ("naming.py", "validator_type", "if node.kind == NodeKind.CALL_GRAPH or isinstance(node.callee, GraphRef):"):
        "the parser gives a GraphRef callee to call_graph nodes only (transformer's call_callee, graph_callee)",
}

#: What the copy needs besides the package (the package's symlinked folders, the fixtures).
COPIED = ("msinspect", "csrc", "grammars", "train_jobs", "tests", "fixtures", "setup.cfg")


def copy_tree(work: Path) -> None:
    """The working tree's files (tracked and untracked, not ignored) of :data:`COPIED` into ``work``."""
    if work.exists():
        shutil.rmtree(work)
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z", "--", *COPIED], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source, target = ROOT / name, work / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def undecorate(text: str) -> str:
    """The module with every decorated function's decorators applied after it
    (``f = outer(inner(f))``): the same objects, in a form mutmut mutates."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.decorator_list]
    for fn in sorted(found, key=lambda n: n.lineno, reverse=True):
        first = fn.decorator_list[0].lineno
        def_line = next(i for i in range(first - 1, len(lines)) if lines[i].lstrip().startswith("def "))
        indent = lines[def_line][:len(lines[def_line]) - len(lines[def_line].lstrip())]
        applied = fn.name
        for deco in reversed(fn.decorator_list):
            applied = f"{ast.get_source_segment(text, deco)}({applied})"
        lines.insert(fn.end_lineno, f"{indent}{fn.name} = {applied}\n")
        del lines[first - 1:def_line]
    return "".join(lines)


def configure(work: Path, files: tuple[str, ...]) -> None:
    for name in files:
        path = work / PACKAGE / name
        path.write_text(undecorate(path.read_text()))
    only = ", ".join(f'"{PACKAGE / name}"' for name in files)
    tests = ", ".join(f'"{t}"' for t in TESTS)
    (work / "pyproject.toml").write_text(f"""[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[tool.mutmut]
source_paths = ["msinspect"]
only_mutate = [{only}]
also_copy = ["csrc", "grammars", "train_jobs", "fixtures"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]
pytest_add_cli_args_test_selection = [{tests}]
use_git_change_detection = false
""")


def run_mutmut(work: Path, *args: str) -> None:
    """``mutmut run ...`` in ``work``, niced, its progress on the terminal."""
    subprocess.run(["nice", "-n", "19", str(Path(sys.executable).with_name("mutmut")), "run", *args], cwd=work)


#: Run inside the work folder: every mutant's status, and a survivor's diff, as JSON (one process,
#: where ``mutmut show`` would start one a survivor).
_RESULTS = """
import json, sys
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files

out = {}
for path in walk_mutatable_files():
    data = SourceFileMutationData(path=path)
    data.load()
    for key, code in data.exit_code_by_key.items():
        status = status_by_exit_code[code]
        out[key] = [status, get_diff_for_mutant(key, path=data.path) if status == "survived" else ""]
json.dump(out, sys.stdout)
"""


def results(work: Path) -> dict[str, list[str]]:
    """Mutant -> [status, diff where it survived] of the run in ``work``."""
    done = subprocess.run(["nice", "-n", "19", sys.executable, "-c", _RESULTS], cwd=work, text=True,
                          capture_output=True)
    if done.returncode:
        sys.exit(f"reading mutmut's results failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def changed_line(diff: str) -> tuple[str, str]:
    """The line a mutant changes, before and after (the first pair of a unified diff)."""
    removed = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return (removed[0] if removed else ""), (added[0] if added else "")


def line_in_repository(name: str, function: str, before: str) -> int | None:
    """The line of ``before`` inside ``function`` of the repository's (decorated) file."""
    text = (ROOT / PACKAGE / name).read_text()
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for number in range(node.lineno, node.end_lineno + 1):
                if lines[number - 1].strip() == before:
                    return number
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", metavar="FILE", help=f"files of the package (default: {' '.join(FILES)})")
    parser.add_argument("--work", type=Path, default=Path("/tmp/msinspect-mutation"), help="the copy's folder")
    parser.add_argument("--report-only", action="store_true", help="read the last run's results again")
    parser.add_argument("--mutants", type=Path, help="run only the mutants named in this file, one a line, "
                                                     "fnmatch patterns allowed (a previous run's survivors.txt)")
    args = parser.parse_args(argv)
    files = tuple(args.files) or FILES
    if set(files) - set(FILES):
        parser.error(f"the package's files are {', '.join(FILES)}")
    started = time.monotonic()
    if not args.report_only:
        copy_tree(args.work)
        configure(args.work, files)
        names = args.mutants.read_text().split() if args.mutants else []
        run_mutmut(args.work, "--max-children", "1", *names)
    elapsed = time.monotonic() - started
    found = results(args.work)
    statuses = {name: status for name, (status, _) in found.items()}
    if args.mutants:
        chosen = args.mutants.read_text().split()
        statuses = {name: status for name, status in statuses.items()
                    if any(fnmatch.fnmatchcase(name, pattern) for pattern in chosen)}
    counts: dict[str, dict[str, int]] = {name: {} for name in files}
    survivors = []
    for mutant, status in sorted(statuses.items()):
        module, _, mangled = mutant.partition(".x")  # msinspect.mindspore.layouts.x_rule__mutmut_3
        name = module.rpartition(".")[2] + ".py"
        if name not in counts:
            continue
        function = re.sub(r"__mutmut_\d+$", "", mangled)  # "_" + a function, or "ǁClassǁmethod"
        function = function.split("ǁ")[-1] if function.startswith("ǁ") else function[1:]
        if status == "survived":
            before, after = changed_line(found[mutant][1])
            reason = KNOWN_EQUIVALENT.get((name, function, after))
            status = "equivalent" if reason else status
            survivors.append((name, function, line_in_repository(name, function, before), before, after, reason, mutant))
        counts[name][status] = counts[name].get(status, 0) + 1
    print(f"{'file':<12} {'made':>5} {'killed':>7} {'survived':>9} {'equivalent':>11} {'timed out':>10} other")
    for name, by in counts.items():
        other = {k: v for k, v in by.items() if k not in ("killed", "survived", "equivalent", "timeout")}
        print(f"{name:<12} {sum(by.values()):>5} {by.get('killed', 0):>7} {by.get('survived', 0):>9} "
              f"{by.get('equivalent', 0):>11} {by.get('timeout', 0):>10} {other or ''}")
    if not args.report_only:
        print(f"run took {elapsed / 60:.1f} min")
    open_survivors = [s for s in survivors if not s[5]]
    (args.work / "survivors.txt").write_text("".join(f"{s[6]}\n" for s in survivors))
    for name, function, line, before, after, reason, mutant in survivors:
        where = f"{PACKAGE / name}:{line or '?'} {function}"
        print(f"\n{'EQUIVALENT' if reason else 'SURVIVED'} {where} ({mutant})\n  - {before}\n  + {after}")
        if reason:
            print(f"  why: {reason}")
    return 1 if open_survivors else 0


if __name__ == "__main__":
    sys.exit(main())
