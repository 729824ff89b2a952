"""The grammar's LALR tables, built once per machine and kept in the user's cache folder.

Building the parser from ``mindspore_ir.lark`` takes about 90 ms per Lark instance (two per
process: one transforming, one building trees for templates); every CLI run and every worker
process of a many-rank job paid it, where loading the built tables takes about 12 ms.

The tables are written with Lark's ``save`` and read back the way Lark's own cache reads them
(``_load`` with the transformer and plugins, which are objects given at each load, never kept):
Lark's public ``Lark.load`` takes no transformer. That one private call is pinned (``lark<2``)
and tested (tests/test_private_apis.py).
Lark's own ``cache=PATH`` is not used: it puts the path into the hash it checks, so a file cannot
be written under a private name and renamed, and a reader could meet half a file. Here the file
is named by the grammar's text, the options, the Lark and lark-cython installed (``cache.parser_libraries``) and Python's version
(:func:`msinspect.cache.grammar_entry`), written whole or not at all, and a file that cannot be
loaded is removed and built again. ``MSINSPECT_NO_CACHE`` builds in memory and writes nothing.
"""
from __future__ import annotations

from pathlib import Path

from lark import Lark

from msinspect import cache


def lark(grammar: str, **options) -> Lark:
    """``Lark(grammar, **options)``, its tables read from the cache folder when kept there."""
    if not cache.enabled():
        return Lark(grammar, **options)
    given = {k: v for k, v in options.items() if k in cache.GIVEN_AT_LOAD}  # objects: passed at each load
    path = cache.grammar_entry(grammar, options)
    try:
        with open(path, "rb") as f:
            return Lark.__new__(Lark)._load(f, **given)
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - damaged, or a Lark that loads differently: build again
        path.unlink(missing_ok=True)
    built = Lark(grammar, **options)
    _keep(built, path, tuple(given))
    return built


def _keep(built: Lark, path: Path, given: tuple[str, ...]) -> None:
    """Write ``built``'s tables to ``path`` whole or not at all (e.g. not where the disk filled or
    an option cannot be pickled)."""
    if cache.write_whole(path, lambda f: built.save(f, exclude_options=given), (Exception,)):
        cache.trim_grammars()
