"""``msinspect cache``: where the cache of parsed files is, how big, and emptying it."""
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

    found = parsed.entries()
    size = sum(st.st_size for _, st in found)
    state = "on" if parsed.enabled() else "off (MSINSPECT_NO_CACHE)"
    click.echo(f"{parsed.parsed_dir()}: {len(found)} parsed files, {size / 2**20:.1f} MB "
               f"of {parsed.limit_bytes() / 2**20:.0f} MB; cache {state}")


@cache.command()
def clear() -> None:
    """Remove every parsed file kept."""
    from msinspect import cache as parsed

    count, size = parsed.clear()
    click.echo(f"removed {count} parsed files ({size / 2**20:.1f} MB) from {parsed.parsed_dir()}")
