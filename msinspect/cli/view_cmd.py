"""``msinspect view DUMP --rank R``: one or two ranks' graphs in Model Explorer, served on 127.0.0.1
(the ``viewer`` extra: ``pip install 'msinspect[viewer]'``)."""
from __future__ import annotations

import contextlib
import json
import signal
import sys
import tempfile
from pathlib import Path

import click

from msinspect.cli.output import errors, lenient_option, stage_option
from msinspect.errors import MsInspectError


@click.command(epilog="Exit status: 0 the server was stopped (Ctrl+C); 1 a rank's IR does not parse; 2 bad input "
                      "or Model Explorer is not installed.")
@click.argument("dump", type=click.Path())
@click.option("--rank", "ranks", type=int, multiple=True,
              help="A rank to show (repeat it for two ranks side by side; default: the first read).")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True, help="Port on 127.0.0.1.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser tab; print the address only.")
@stage_option
@lenient_option
def view(dump, ranks, port, no_browser, stage, lenient):
    """Export the graph of each --rank (as ``msinspect export`` does, into a temporary folder removed
    on exit) and start Model Explorer on 127.0.0.1 with them: layers collapse by scope, strategies
    and per-rank shapes in the side panel, communication highlighted; two ranks open as two models
    that its split view compares. Stop it with Ctrl+C."""
    from msinspect.dumps import load_dump
    from msinspect.export.model_explorer import export_rank, node_data_path, wire_bytes_node_data

    with errors():
        try:
            import model_explorer
        except ImportError:
            raise MsInspectError("Model Explorer is not installed: pip install 'msinspect[viewer]' "
                                 "(or pip install ai-edge-model-explorer)") from None
        loaded = load_dump(dump)
        with _stopped_by_sigterm(), tempfile.TemporaryDirectory(prefix="msinspect-view-") as folder:
            config = model_explorer.config()
            first = None
            for rank in ranks or (None,):
                collection = export_rank(loaded, rank, stage, lenient=lenient)
                path = Path(folder) / (collection["label"].replace(" ", "-") + ".json")
                path.write_text(json.dumps(collection), encoding="utf-8")
                config.add_model_from_path(str(path))
                first = first or path.name
                overlay = wire_bytes_node_data(collection)
                if overlay:  # the wire bytes of the communication nodes, as an overlay
                    node_data_path(path).write_text(json.dumps(overlay), encoding="utf-8")
                    _add_overlay(config, node_data_path(path), path.name, first=path.name == first)
                click.echo(f"exported {collection['label']}: {sum(len(g['nodes']) for g in collection['graphs'])} "
                           "node(s)")
            model_explorer.visualize_from_config(config, host="127.0.0.1", port=port, no_open_in_browser=no_browser)


@contextlib.contextmanager
def _stopped_by_sigterm():
    """SIGTERM (a service manager, ``kill``) ends the server as Ctrl+C does: the ``with`` blocks
    unwind, so the temporary folder of exported graphs is removed, not left in /tmp."""
    def stop(signum, frame):
        sys.exit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _add_overlay(config, path: Path, model: str, *, first: bool) -> None:
    """The node data of ``path`` on the model of the file named ``model`` (Model Explorer applies
    node data to its first model unless ``model_name`` names another). A Model Explorer too old to
    take ``model_name`` gets the first model's overlay only, and a note says so."""
    try:
        config.add_node_data_from_path(str(path), model_name=model)
    except TypeError:
        if first:
            config.add_node_data_from_path(str(path))
        else:
            click.echo(f"note: this Model Explorer cannot attach node data to a second model; {path.name} "
                       "is not shown (upgrade ai-edge-model-explorer)", err=True)
