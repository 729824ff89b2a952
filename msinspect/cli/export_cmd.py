"""``msinspect export DUMP --rank R --format model-explorer``: one rank's graph for another tool."""
from __future__ import annotations

import json

import click

from msinspect.cli.choice import Choice
from msinspect.cli.output import errors, lenient_option, stage_option, warn_skipped
from msinspect.cli.reads import tell_plan


@click.command(epilog="Exit status: 0 written; 1 a rank could not be read or its IR does not parse; 2 bad "
                      "input (no such path or rank, output exists).")
@click.argument("dump", type=click.Path())
@click.option("--rank", type=int, default=None, help="The rank to export (default: the first read).")
@click.option("--format", "fmt", type=Choice(["model-explorer"]), default="model-explorer", show_default=True,
              help="model-explorer: Model Explorer's JSON graph format (pip install ai-edge-model-explorer; "
                   "open the file in it).")
@click.option("-o", "--output", "out", type=click.Path(), default=None,
              help="The JSON file (default: rank<R>-<stage>.json, never an existing file).")
@click.option("--node-data", "node_data", type=click.Path(), default=None,
              help="Where Model Explorer's per-node data (each communication node's wire bytes, an overlay "
                   "to load beside the graph) goes (default: beside the graph, <name>-wire-bytes.json).")
@click.option("--overwrite", is_flag=True, help="Replace the -o (and --node-data) file if it exists.")
@stage_option
@lenient_option
def export(dump, rank, fmt, out, node_data, overwrite, stage, lenient):
    """Write one rank's IR graph (the stage the analyses read, or --stage) in another tool's
    format: for Model Explorer, one graph per IR subgraph, namespaces from the IR's scopes so layers
    collapse, strategies and per-rank shapes as node and output attributes, inserted
    communication highlighted with its kind, group, ranks and tensor bytes."""
    from msinspect.dumps import load_dump
    from msinspect.export.model_explorer import export_rank, node_data_path, rank_analysis, wire_bytes_node_data
    from msinspect.report.files import check_writable, free_name, write_new

    with errors():
        if out:
            check_writable(out, overwrite=overwrite)
        if node_data:
            check_writable(node_data, overwrite=overwrite)
        loaded = load_dump(dump)
        analysis = rank_analysis(loaded, rank, stage, lenient=lenient)  # that rank's file alone
        collection = export_rank(loaded, rank, stage, lenient=lenient, analysis=analysis)
        warn_skipped(analysis.skipped)
        if analysis.plan is not None:
            tell_plan(analysis.plan)
        path = out or free_name(collection["label"].replace(" ", "-").replace("rank_", "rank"), ".json")
        overlay_path = check_writable(node_data or node_data_path(path), overwrite=overwrite)  # before writing
        overlay = wire_bytes_node_data(collection)
        written = write_new(path, json.dumps(collection), overwrite=overwrite)
        overlay_written = write_new(overlay_path, json.dumps(overlay), overwrite=overwrite)
    nodes = sum(len(g["nodes"]) for g in collection["graphs"])
    click.echo(f"wrote {written}: {len(collection['graphs'])} graph(s), {nodes} node(s) of {collection['label']}")
    valued = sum(len(g["results"]) for g in overlay.values())
    click.echo(f"wrote {overlay_written}: wire bytes of {valued} communication node(s), Model Explorer's per-node "
               "data (load it beside the graph as an overlay)")
