"""Put right what ``pytest --msinspect-dumps PATH`` (a space, not ``=``) did to pytest's rootdir
and ini file.

pytest chooses its rootdir and ini file from the command line before it imports any plugin (the
ini file names the plugins to load), so at that moment it does not know that ``--msinspect-dumps``
takes a value and counts PATH as a test path: a dump outside the project roots the run at the dump
and the project's ini file is never read (pytest issues #1471, #8846; ``-p`` plugins and entry
points alike are loaded after that choice). No plugin can register an option early enough, so the
plugin works the choice out again in ``pytest_load_initial_conftests``, the first hook after it is
loaded and before any conftest: the command line read with the option known. When that gives
another rootdir or ini file, the config takes them, with their values and ``addopts``.

Some of what the wrong ini file did cannot be undone (plugins it loaded with ``-p``, its
``pythonpath``, ``required_plugins``, ``minversion``), and older pytests keep these values under
other names: then the run stops with a usage error that says to write ``--msinspect-dumps=PATH``.
pytest publishes none of what this needs (``determine_setup``, the config's ``_parser``,
``_inicfg``, ``_rootpath``, ...); tests/test_private_apis.py fails where a release changes them.
"""
from __future__ import annotations

import copy
import os
import shlex
from pathlib import Path

import pytest

FLAG = "--msinspect-dumps"
#: ini values pytest has acted on before the plugin is loaded, which no later change undoes
ACTED_ON = ("pythonpath", "required_plugins", "minversion")


def command_line(config: pytest.Config) -> list[str]:
    """The arguments pytest chose its rootdir from: ``PYTEST_ADDOPTS`` then the command line."""
    return [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]


def refuse(config: pytest.Config, took: Path | None, why: str) -> None:
    """Stop the run: ``took`` (the ini file pytest chose, else its rootdir) cannot be set right."""
    given = config.known_args_namespace.msinspect_dumps
    raise pytest.UsageError(
        f"{FLAG} {given}: pytest read {given} as a test path when it chose its rootdir and ini file "
        f"(it does so before plugins are loaded), so it took {took or config.rootpath}; {why}. "
        f"Write {FLAG}={given} (with '='), or set msinspect_dumps in the ini file.")


def repair(config: pytest.Config, args: list[str]) -> None:
    """Give ``config`` the rootdir and ini file pytest would have chosen had it known that
    ``--msinspect-dumps`` takes a value; ``args`` is the argument list pytest parses next (with the
    ini file's ``addopts`` in front), changed in place."""
    if FLAG not in command_line(config):
        return  # "--msinspect-dumps=PATH" or none: nothing was misread
    try:
        from _pytest.config.findpaths import determine_setup

        parser = config._parser
        known = parser.parse_known_args(command_line(config), namespace=copy.copy(config.option))
        setup = determine_setup(inifile=known.inifilename, override_ini=known.override_ini,
                                args=known.file_or_dir, rootdir_cmd_arg=known.rootdir or None,
                                invocation_dir=config.invocation_params.dir)
        rootpath, inipath, inicfg = setup[:3]
        if (rootpath, inipath) == (config.rootpath, config.inipath):
            return
        wrong_cfg = config._inicfg
    except (ImportError, AttributeError, TypeError) as exc:  # a pytest that keeps these otherwise
        refuse(config, config.inipath, f"this pytest ({pytest.__version__}) cannot be set right ({exc})")
    acted = [key for key in ACTED_ON if key in wrong_cfg]
    wrong_addopts = list(config.getini("addopts"))
    if any(arg.startswith("-p") for arg in wrong_addopts):  # "-p name" or "-pname"
        acted.append("addopts -p")
    if acted:
        refuse(config, config.inipath, f"that file set {', '.join(acted)}, which pytest has acted on")
    if args[:len(wrong_addopts)] == wrong_addopts:
        del args[:len(wrong_addopts)]

    config._rootpath, config._inipath, config._inicfg = rootpath, inipath, inicfg
    if len(setup) > 3:
        config._ignored_config_files = setup[3]
    config._inicache.clear()
    parser.extra_info.update(rootdir=str(rootpath), inifile=str(inipath))
    addopts = list(config.getini("addopts"))
    args[:0] = addopts
    config.known_args_namespace = namespace = parser.parse_known_args(args, namespace=copy.copy(config.option))
    if namespace.confcutdir is None:  # as pytest sets it: the ini file's folder, else the rootdir
        namespace.confcutdir = str(inipath.parent if inipath else rootpath)
    config.pluginmanager.consider_preparse(addopts, exclude_only=False)
    config._checkversion()
    config._configure_python_path()
    config._validate_plugins()
