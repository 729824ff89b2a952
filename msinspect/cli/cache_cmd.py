"""``msinspect cache``: where the caches of parsed files and analysed ranks are, how big, and emptying them."""
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


@cache.command()
def clear() -> None:
    """Remove every parsed file and analysed rank kept."""
    from msinspect import cache as parsed

    count, size = parsed.PARSED.clear()
    click.echo(f"removed {count} parsed files ({size / 2**20:.1f} MB) from {parsed.PARSED.folder}")
    count, size = parsed.RESULTS.clear()
    click.echo(f"removed {count} analysed ranks ({size / 2**20:.1f} MB) from {parsed.RESULTS.folder}")
