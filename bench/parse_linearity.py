"""Parse time stays linear in every dimension a dump (or a damaged file) can grow, in both of the
parser's readings (``MSINSPECT_PARSER=fast`` and ``reference``).

Each case builds a text of size ``n`` in one dimension (operands on a line, nodes in a graph,
graphs in a file, attributes on a node, the length of one attribute, one string, one number,
scope depth, a tuple constant, ...) and of size ``8n``, parses both with each reading and prints
the CPU seconds of each and their ratio; a ratio over 12 (linear is 8) is flagged ``QUADRATIC?``
and makes the exit status 1. Each parse starts from a fresh parser (its per-process tables
emptied, the grammar's tables loaded and warmed on a tiny dump), so nothing of the ``n`` text is
kept when the ``8n`` one is read; the time is ``time.process_time`` (this process's own CPU
seconds), the best of ``--repeat`` runs: wall-clock ratios swing by 2x on a shared machine.

Usage: python bench/parse_linearity.py [--only NAME,...] [--readings fast,reference]
                                       [--scale X] [--repeat R] [--list]

Outside CI (about five minutes on two busy cores). The record of runs is at the end of this
docstring and in docs/performance.md.

2026-11-27, 2 shared cores, before the fixes (issue 40, item 10): ``operands_same`` fast 4,000 ->
32,000 operands 42x, ``operands_distinct`` fast 40x (the fast reading's call template tested each
operand against a tuple of every reference's place); the reference reading linear there.

2026-11-29, 2 shared cores, the whole run (best of 2), before -> after the fixes:

- ``operands_same`` fast 32.8x -> 6.2x (5.28 s -> 0.05 s at 32,000 operands), ``operands_distinct``
  47.5x -> 7.5x, ``operands_params`` 52.5x -> 8.1x, ``abstracts_on_type_line`` (a MakeTuple of
  16,000 operands) 34.7x -> 7.5x: the call template's places of references are a set
  (``parser.fastpath._template``), not a tuple each operand was tested against.
- ``words_in_line`` 19.0x fast, 17.4x reference -> 6.2x, 5.4x (1.15 s -> 0.09 s fast, 0.55 s -> 0.05 s
  reference at 160,000 words,
  peak RSS 368 MB -> 44 MB): the grammar's KV_LINE and KEY terminals repeat a group of words;
  Python's ``re`` kept backtracking state for every word of a line that is no key line (some
  500 bytes a character) until the group was made possessive (``*+``: what follows the group,
  spaces then ":", can never begin inside a word it took, so it matches what it did).
- ``scope_depth`` / ``scope_depth_old``: 11.5x - 13.7x at n = 20,000 were a few milliseconds
  against the timer's resolution; at n = 100,000 (now the case's n) 7.0x - 9.7x, one run of the
  reference reading 13.5x and 7.0x when run again.

Every other case was within 12x before and after (the largest: ``blank_lines`` 10.5x,
``broken_nodes_lenient`` 10.9x). The whole run's peak RSS 640 MB -> 655 MB is the 8 MB texts'.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory import peak_kb  # noqa: E402
from msinspect.errors import MsInspectError  # noqa: E402
from msinspect.parser import core  # noqa: E402
from msinspect.parser_mode import READINGS, VARIABLE  # noqa: E402

#: Linear is 8 between n and 8n; over this the case is flagged.
LIMIT = 12.0
GROWTH = 8

TYPES = "      : (<Tensor[Float32], (8, 16)>) -> (<Tensor[Float32], (8, 16)>)\n"
SCOPE = "      # Fullname with scope: (Default/net-Net/ReLU-op{i})\n"
SOURCE = "      # In file /src/net.py:{i}, 8~20/        y = self.relu(x)/\n"


def node(i: int, operands: str = "%para1_x", attrs: str = "", types: str = TYPES, notes: str | None = None,
         op: str = "PrimFunc_ReLU", name: str | None = None) -> str:
    """One node item as MindSpore 2.10 writes it."""
    notes = (SCOPE + SOURCE).format(i=i) if notes is None else notes
    return f"  %{i}({name or f'CNode_{i}'}) = {op}({operands}){attrs}\n{types}{notes}"


def graph(name: str, body: str, last: int, order: str = "") -> str:
    """One subgraph with its attribute block, returning node ``last``, its ``# Order:`` lines
    after it."""
    return (f"subgraph attr:\ntraining: 1\nsubgraph @{name}(%para1_x) {{\n{body}"
            f"  Return(%{last})\n      : (<Tensor[Float32], (8, 16)>)\n"
            f"      # Fullname with scope: (Default/net-Net/Return-op0)\n}}\n{order}\n\n")


def dump(graphs: list[str], params: str = "", attrs: str = "training: 1\n") -> str:
    """A whole 2.10 dump: header, ``# Attrs:``, ``# Params:``, then ``graphs`` (each ``graph()``)."""
    entry = graphs[0].split("subgraph @", 1)[1].split("(", 1)[0] if graphs else "g"
    params = params or "%para1_x: <Tensor[Float32], (8, 16)> : [8, 16]\n"
    return (f"# IR entry: @{entry}\n# Total subgraphs: {len(graphs)}\n\n# Attrs:\n{attrs}\n"
            f"# Total params: {params.count(chr(10))}\n# Params:\n{params}\n" + "".join(graphs))


def one_node(**kw) -> str:
    """A dump of one graph of one node ``%0`` (``node(0, **kw)``)."""
    return dump([graph("g", node(0, **kw), 0)])


def _distinct_nodes(n: int) -> str:
    body = "".join(node(i, f"%{i - 1}" if i else "%para1_x",
                        attrs=f" {{instance name: relu_{i}}} primitive_attrs: {{in_strategy: ((2, {i % 7 + 1}))}} "
                              f'cnode_primal_attrs: {{unique_id: "{1000 + i}"}}')
                   for i in range(n))
    return dump([graph("g", body, n - 1)])


def _graphs(n: int) -> str:
    return dump([graph(f"g_{k}", node(0) + node(1, "%0"), 1) for k in range(n)])


def _params(n: int) -> str:
    params = "".join(f"%para{k + 1}_w{k}: <Ref[Tensor[Float32]], ({k % 9 + 1}, 16), ref_key=w{k}, is_parameter>"
                     "  :  has_default\n" for k in range(n))
    return dump([graph("g", node(0), 0)], params=params)


def _abstracts(n: int) -> str:
    types = "      : (" + ", ".join(f"<Tensor[Float32], ({k}, 16)>" for k in range(n)) + ") -> (<Tensor[Float32], (8, 16)>)\n"
    return one_node(operands=", ".join(["%para1_x"] * n), types=types, op="MakeTuple")


def _broken(n: int) -> str:
    return dump([graph("g", "".join(node(i, "%para1_x, ?" if i % 2 else "%para1_x") for i in range(2 * n)), 0)])


def _notes(n: int) -> str:
    notes = SCOPE.format(i=0) + "".join(SOURCE.format(i=k) for k in range(n))
    return one_node(notes=notes)


def _comment_block(n: int) -> str:
    notes = "      # Comment:\n" + "".join(f"        user line {k}\n" for k in range(n))
    return one_node(notes=notes)


#: name -> (what grows, n, build(n) -> text, lenient)
CASES: dict[str, tuple[str, int, object, bool]] = {
    # ---------------------------------------------------------------- a dump's own dimensions
    "operands_same": ("operands on a line, one parameter repeated", 4000,
                      lambda n: one_node(operands=", ".join(["%para1_x"] * n), op="MakeTuple"), False),
    "operands_distinct": ("operands on a line, each another node", 4000,
                          lambda n: one_node(operands=", ".join(f"%{k + 1}" for k in range(n)), op="MakeTuple"), False),
    "operands_params": ("operands on a line, each another parameter", 4000,
                        lambda n: one_node(operands=", ".join(f"%para{k}_w{k}" for k in range(n)), op="MakeTuple"), False),
    "operands_constants": ("operands on a line, each another constant", 4000,
                           lambda n: one_node(operands=", ".join(f"I64({k})" for k in range(n)), op="MakeTuple"), False),
    "abstracts_on_type_line": ("abstracts on a type line, each its own shape", 2000, _abstracts, False),
    "nodes_in_graph": ("nodes in one graph, each with its own attributes", 1000, _distinct_nodes, False),
    "graphs_in_file": ("graphs in one file", 500, _graphs, False),
    "params_in_file": ("lines of the # Params: block", 1000, _params, False),
    "attrs_on_node": ("attributes on one node", 1000,
                      lambda n: one_node(attrs=" primitive_attrs: {" + ", ".join(f"key_{k}: I64({k})" for k in range(n)) + "}"),
                      False),
    "attr_length": ("the length of one attribute (a tuple of numbers)", 4000,
                    lambda n: one_node(attrs=" primitive_attrs: {in_strategy: ((" + ", ".join(str(k % 97) for k in range(n)) + "))}"),
                    False),
    "attr_strings": ("strings in one attribute dict", 1000,
                     lambda n: one_node(attrs=" cnode_primal_attrs: {" + ", ".join(f'id_{k}: "{k}"' for k in range(n)) + "}"),
                     False),
    "one_string": ("the length of one string", 200_000,
                   lambda n: one_node(attrs=' primitive_attrs: {mirror_user_id: "' + "a" * n + '"}'), False),
    "one_string_operand": ("the length of one string among the operands", 200_000,
                           lambda n: one_node(operands='%para1_x, "' + "a" * n + '"'), False),
    "instance_name": ("the length of an instance name", 200_000,
                      lambda n: one_node(attrs=" {instance name: " + "a" * n + "}"), False),
    "node_name": ("the length of a node's debug name", 200_000, lambda n: one_node(name="a" * n), False),
    "graph_name": ("the length of a graph's name", 200_000,
                   lambda n: dump([graph("g" * n, node(0), 0)]), False),
    "param_name": ("the length of a parameter's name", 200_000,
                   lambda n: one_node(operands="%para1_" + "x" * n), False),
    "one_number": ("the digits of one number (past 64: an error)", 100_000,
                   lambda n: one_node(operands="%para1_x, " + "1" * n), False),
    "one_number_attr": ("the digits of one number in an attribute", 100_000,
                        lambda n: one_node(attrs=" primitive_attrs: {axis: I64(" + "7" * n + ")}"), False),
    "one_shape": ("the dimensions of one shape", 4000,
                  lambda n: one_node(types="      : (<Tensor[Float32], (" + ", ".join(str(k) for k in range(n)) + ")>) -> ()\n"),
                  False),
    "scope_depth": ("scope depth (# Fullname with scope)", 100_000,
                    lambda n: one_node(notes="      # Fullname with scope: (Default/" + "/".join(f"b{k}-Block" for k in range(n)) + "/ReLU-op0)\n"),
                    False),
    "scope_depth_old": ("scope depth (# Scope, 2.2)", 100_000,
                        lambda n: one_node(notes="      # Scope: (Default/" + "/".join(f"b{k}-Block" for k in range(n)) + ")\n"),
                        False),
    "tuple_constant": ("items of a tuple constant", 4000,
                       lambda n: one_node(operands="%para1_x, (" + ", ".join(f"I64({k})" for k in range(n)) + ")"), False),
    "tuple_nested": ("nesting of a tuple constant (past 100: an error)", 20_000,
                     lambda n: one_node(operands="%para1_x, " + "(" * n + "1" + ")" * n), False),
    "notes_under_node": ("comment lines under one node", 4000, _notes, False),
    "comment_block": ("lines of one # Comment: block", 4000, _comment_block, False),
    "kv_lines": ("lines of the # Attrs: block", 4000,
                 lambda n: dump([graph("g", node(0), 0)], attrs="".join(f"key_{k}: {k}\n" for k in range(n))), False),
    "order_block": ("lines of one # Order: block", 4000,
                    lambda n: dump([graph("g", node(0), 0, order="# Order:\n" + "".join(
                        f"#   {k}: @g:CNode_{k}{{[0]: ValueNode<Primitive> ReLU, [1]: x}}\n" for k in range(n)))]), False),
    # ---------------------------------------------------------------- damaged files
    "digits_run": ("a run of digits before a letter", 40_000,
                   lambda n: one_node(operands="%para1_x, " + "1" * n + "x"), False),
    "open_brackets": ("a run of '(' never closed", 40_000, lambda n: one_node(operands="%para1_x, " + "(" * n), False),
    "abstract_brackets": ("a run of '(' inside an abstract", 40_000,
                          lambda n: one_node(types="      : (<" + "(" * n + ">) -> ()\n"), False),
    "abstracts_nested": ("abstracts nested in an abstract", 20_000,
                         lambda n: one_node(types="      : (" + "<" * n + "Tensor" + ">" * n + ") -> ()\n"), False),
    "spaces_in_key_line": ("spaces inside a key line", 40_000,
                           lambda n: "# IR entry: @g\n# Attrs:\nkey" + " " * n + "x\n", False),
    "comment_line": ("the length of one comment line", 1 << 20,
                     lambda n: one_node(notes=SCOPE.format(i=0) + "      # " + "x" * n + "\n"), False),
    "blank_lines": ("blank lines between items", 1 << 20,
                    lambda n: dump([graph("g", node(0) + "\n" * n + node(1, "%0"), 1)]), False),
    "broken_nodes_lenient": ("nodes that do not parse, read leniently", 200, _broken, True),
    "words_in_line": ("words of a line that is no item", 20_000,
                      lambda n: one_node() + " ".join(["word"] * n) + "\n", True),
}


def _fresh_parser(reading: str) -> None:
    """A new parser of ``reading``, its tables loaded and warmed on a tiny dump, none of its
    per-text tables holding anything of the case."""
    import os

    os.environ[VARIABLE] = reading
    core._parser.cache_clear()
    core.parse_text(dump([graph("warm", node(0), 0)]), "warm.ir")


def _time(text: str, lenient: bool, reading: str, repeat: int) -> tuple[float, str]:
    """The best CPU seconds of ``repeat`` parses of ``text``, each by a fresh parser, and what the
    parse gave (its status, or the error's class)."""
    best, said = float("inf"), ""
    for _ in range(repeat):
        _fresh_parser(reading)
        gc.collect()
        started = time.process_time()
        try:
            ir = core.parse_text(text, "case.ir", lenient=lenient)
            said = f"{ir.status}" + (f" ({len(ir.diagnostics)} diag)" if ir.diagnostics else "")
        except MsInspectError as err:
            said = f"{type(err).__name__}: {err.message[:40]}" if hasattr(err, "message") else type(err).__name__
        except Exception as err:  # noqa: BLE001 - an escape is what this would show
            said = f"ESCAPED {type(err).__name__}"
        best = min(best, time.process_time() - started)
    return best, said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", default=None, help="Only these cases (comma-separated).")
    parser.add_argument("--readings", default=",".join(READINGS))
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply every case's n.")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="List the cases and what grows in each.")
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.only or c in args.only.split(",")]
    if args.list:
        for name in chosen:
            print(f"{name:24s} n={CASES[name][1]:<8d} {CASES[name][0]}")
        return 0
    readings = args.readings.split(",")
    print(f"{'case':24s} {'reading':9s} {'n':>8s} {'MB at 8n':>8s} {'s at n':>8s} {'s at 8n':>8s} {'ratio':>6s}  at 8n")
    flagged = []
    for name in chosen:
        _, n, build, lenient = CASES[name]
        n = max(1, int(n * args.scale))
        small, large = build(n), build(GROWTH * n)
        for reading in readings:
            t_small, _ = _time(small, lenient, reading, args.repeat)
            t_large, said = _time(large, lenient, reading, args.repeat)
            ratio = t_large / max(t_small, 1e-3)
            flag = "  QUADRATIC?" if ratio > LIMIT else ""
            if flag:
                flagged.append(f"{name} ({reading})")
            print(f"{name:24s} {reading:9s} {n:8d} {len(large) / 1e6:8.2f} {t_small:8.3f} {t_large:8.3f} "
                  f"{ratio:6.1f}  {said}{flag}", flush=True)
    print(f"peak RSS {peak_kb() / 1024:.0f} MB")
    if flagged:
        print(f"over {LIMIT:g}x between n and {GROWTH}n: " + ", ".join(flagged))
        return 1
    print(f"every case within {LIMIT:g}x between n and {GROWTH}n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
