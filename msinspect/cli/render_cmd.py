"""``msinspect render DUMP``: draw the graph around an operator, or a whole subgraph, with graphviz."""
from __future__ import annotations

import click

from msinspect.cli.choice import Choice
from msinspect.cli.exits import errors
from msinspect.cli.output import warn_skipped
from msinspect.cli.reads import tell_unreadable
from msinspect.errors import shown_path
from msinspect.render.files import FORMATS


@click.command(epilog="Exit status: 0 picture written; 1 the IR file does not parse; 2 bad input (no such "
                      "path, no IR files, no such rank, stage or subgraph, no operator matching --op, "
                      "output file exists); 3 Graphviz's 'dot' program is missing: the .dot source was "
                      "written and the way to install 'dot' printed.")
@click.argument("dump", type=click.Path())
@click.option("--op", "selector", metavar="SELECTOR",
              help="Operator(s) to draw around: an instance name (matmul), scope/name "
                   "(layer1-Dense/matmul) or a scope.")
@click.option("--graph", "graph_name", metavar="NAME",
              help="Subgraph: drawn whole without --op; with --op, where to look.")
@click.option("--rank", type=int, default=None, help="Rank to draw when DUMP is a dump root (default: the first).")
@click.option("--stage", default=None,
              help="Stage file to draw (default: validate, else step_parallel_end, execute, step_parallel_begin).")
@click.option("--depth", type=click.IntRange(min=0), default=2, show_default=True,
              help="Real-operator hops drawn upstream and downstream of the operator.")
@click.option("--backward", is_flag=True, help="Include the gradient graph.")
@click.option("--plumbing", is_flag=True, help="Draw Load, Depend, UpdateState, MakeTuple ... instead of "
                                               "collapsing them into the edges.")
@click.option("-o", "--output", "out", type=click.Path(), default=None,
              help="Picture file (default: e.g. matmul-rank0-validate.svg in the current folder).")
@click.option("--format", "fmt", type=Choice(FORMATS), default=None,
              help="svg, png or dot (default: from the -o suffix, else svg). The .dot source is always "
                   "written beside the picture.")
@click.option("--overwrite", is_flag=True, help="Replace existing output files.")
@click.option("--lenient", is_flag=True, help="Draw what can be read of an IR file that does not parse whole; "
                                              "warn with every skipped span.")
@click.option("--param", metavar="NAME", help="Draw instead the device grid of the weight NAME: the slice each rank "
                                              "holds (SVG or PNG; --rank marks one rank).")
def render(dump, selector, graph_name, rank, stage, depth, backward, plumbing, out, fmt, overwrite, lenient, param):
    """Draw, with graphviz, the operators around --op (or the whole --graph subgraph; by default
    the entry graph) from one rank's IR: strategies (user or planner) and per-rank or global shapes
    on the nodes, tensor shapes on the edges, inserted communication highlighted with its kind and
    group ranks, parameters as small nodes. DUMP is a dump root, a rank_N folder or an IR file."""
    if param:
        from msinspect.cli.grid_cmd import draw_param
        return draw_param(dump, param, rank, stage, out, fmt, overwrite, lenient)
    from msinspect.render import dot_path_for, output_path, render_dump, write  # networkx and graphviz: here

    with errors():
        picture = render_dump(dump, around=selector, graph_name=graph_name, rank=rank, stage=stage, depth=depth,
                              include_backward=backward, include_plumbing=plumbing, lenient=lenient,
                              on_skipped=lambda ir: warn_skipped(
                                  [f"{shown_path(ir.path)}:{d.line}:{d.column}: {d.message}" for d in ir.diagnostics]))
        path, fmt = output_path(out, fmt, picture)
        written = write(picture.digraph, path, fmt, overwrite=overwrite)
    tell_unreadable(picture.unreadable, finding=False)  # the picture is of the file named below
    if fmt == "dot":
        click.echo(f"wrote {written} (from {picture.file})")
    else:
        click.echo(f"wrote {written} and its source {dot_path_for(written, fmt)} (from {picture.file})")
