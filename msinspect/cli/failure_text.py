"""How ``parse`` and ``summary`` show an ``analyze_fail.ir``'s failure in a terminal."""
from __future__ import annotations

from msinspect.cli.output import styled
from msinspect.model import where


def print_failure(out, path: str, failure: dict) -> None:
    """The exception MindSpore caught and the evaluation stack, each node with its source line."""
    out.print(styled((f"{path}:", "bold red"), f" MindSpore's evaluation failed: {failure['message']}"), soft_wrap=True)
    if failure["stack"]:
        out.print("  evaluation stack, outermost first (the node marked ------------------------> depth):",
                  markup=False, highlight=False)
    for frame in failure["stack"]:
        out.print(f"  {frame['depth']:>3}  {where(path, frame['line'])}: {frame['node']}",
                  markup=False, highlight=False, soft_wrap=True)
        if frame["source"]:
            out.print(f"       {frame['source']}", markup=False, highlight=False, soft_wrap=True)
