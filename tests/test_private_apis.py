"""The two places msinspect uses what Lark and pytest do not publish, each for a reason no public
API serves, pinned here so that a release that changes them fails this test, not a user's run:

- ``Lark._load(f, transformer=..., _plugins=...)`` (msinspect.parser.compiled): the public
  ``Lark.load(f)`` takes no transformer, and the public ``cache=`` option writes its file in
  place, where a reader can meet half of it and a full disk leaves one behind. setup.cfg pins
  ``lark<2``.
- pytest's ``determine_setup`` and the config's ``_parser`` / ``_inicfg`` / ``_rootpath`` ...
  (msinspect.pytest_setup): no plugin can take part in pytest's choice of rootdir and ini file
  (pytest issues #1471, #8846), and there is no public way to give a config another one. Where a
  pytest lacks them, the plugin stops with a usage error that says to write
  ``--msinspect-dumps=PATH`` (tests/plugin/test_plugin_paths.py)."""
from __future__ import annotations

import inspect

import pytest
from lark import Lark

from msinspect.parser import compiled


def test_lark_loads_saved_tables_with_a_transformer_given_at_load():
    assert "Lark.__new__(Lark)._load(f, **given)" in inspect.getsource(compiled.lark)
    params = inspect.signature(Lark._load).parameters
    assert list(params)[:2] == ["self", "f"] and any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert "transformer" not in inspect.signature(Lark.load).parameters  # the public one cannot


def test_pytest_still_has_what_the_plugin_sets_right(pytestconfig):
    from _pytest.config.findpaths import determine_setup

    params = inspect.signature(determine_setup).parameters
    assert {"inifile", "override_ini", "args", "rootdir_cmd_arg", "invocation_dir"} <= set(params)
    for name in ("_parser", "_inicfg", "_rootpath", "_inipath", "_inicache"):
        assert hasattr(pytestconfig, name), name
    for name in ("_checkversion", "_configure_python_path", "_validate_plugins"):
        assert callable(getattr(pytestconfig, name)), name
    assert callable(pytestconfig._parser.parse_known_args)
    assert pytest.version_tuple[0] >= 7
