"""``msinspect cache``: where the caches of parsed files, analysed ranks and the built grammar are,
how big, and emptying them."""
from __future__ import annotations

import click


@click.group()
def cache() -> None:
    """The cache of parsed IR files (kept by content, msinspect's version and grammar; see
    `msinspect --no-cache`)."""


@cache.command()
def info() -> None:
    """Where the cache is, its entries and size, and its bound."""
    from msinspect import cache as parsed

    state = "on" if parsed.enabled() else "off (MSINSPECT_NO_CACHE)"
    for store, what in ((parsed.PARSED, "parsed files"), (parsed.RESULTS, "analysed ranks")):
        found = store.entries()
        size = sum(st.st_size for _, st in found)
        click.echo(f"{store.folder}: {len(found)} {what}, {size / 2**20:.1f} MB "
                   f"of {parsed.limit_bytes() / 2**20:.0f} MB; cache {state}")
    click.echo(f"{parsed.grammar_dir()}: {len(parsed.grammar_files())} built grammars "
               f"(the newest {parsed.GRAMMARS_KEPT} kept)")


@cache.command()
def clear() -> None:
    """Remove every parsed file, analysed rank and built grammar kept."""
    from msinspect import cache as parsed

    count, size = parsed.PARSED.clear()
    click.echo(f"removed {count} parsed files ({size / 2**20:.1f} MB) from {parsed.PARSED.folder}")
    count, size = parsed.RESULTS.clear()
    click.echo(f"removed {count} analysed ranks ({size / 2**20:.1f} MB) from {parsed.RESULTS.folder}")
    count, size = parsed.clear_grammars()
    click.echo(f"removed {count} built grammars ({size / 2**20:.1f} MB) from {parsed.grammar_dir()}")
