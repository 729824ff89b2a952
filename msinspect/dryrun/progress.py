"""Live per-rank progress of a dry run in the terminal (rich), fed by run_dryrun's on_update."""
from __future__ import annotations

import threading
import time

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .report import RankState, SimulatedRank

_STYLE = {RankState.OK: "green", RankState.COMPILED: "yellow", RankState.FAILED: "red", RankState.TIMED_OUT: "red",
          RankState.CANCELLED: "yellow", RankState.RUNNING: "cyan", RankState.QUEUED: "dim"}
_DONE = (RankState.OK, RankState.COMPILED, RankState.FAILED, RankState.TIMED_OUT, RankState.CANCELLED)


class RankProgress:
    """A bar over all ranks plus one row per running rank (state, elapsed, IR files written).

    Use as a context manager and pass :meth:`update` as ``on_update`` to ``run_dryrun``.
    Finished ranks leave the table (failures are listed in the final summary).
    """

    def __init__(self, total: int, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self._lock = threading.Lock()
        self._rows: dict[int, tuple[SimulatedRank, int]] = {}
        self._started: dict[int, float] = {}
        self._bar = Progress(TextColumn("[bold]dry run"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("ranks  {task.fields[failed]}"), TimeElapsedColumn(), console=self.console)
        self._task = self._bar.add_task("ranks", total=total, failed="")
        self._live = Live(get_renderable=self._render, console=self.console, refresh_per_second=4, transient=False)

    def __enter__(self) -> "RankProgress":
        self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._live.__exit__(*exc)

    def update(self, result: SimulatedRank, n_files: int) -> None:
        with self._lock:
            if result.state is RankState.RUNNING and result.rank not in self._started:
                self._started[result.rank] = time.monotonic()
            self._rows[result.rank] = (result, n_files)
            done = [r for r, _ in self._rows.values() if r.state in _DONE]
            failed = sum(1 for r in done if r.state in (RankState.FAILED, RankState.TIMED_OUT))
            cancelled = sum(1 for r in done if r.state is RankState.CANCELLED)
            said = [f"[red]{failed} failed" if failed else "", f"[yellow]{cancelled} cancelled" if cancelled else ""]
            self._bar.update(self._task, completed=len(done), failed=" ".join(x for x in said if x))

    def _render(self):
        table = Table(box=None, show_header=True, header_style="bold")
        for col in ("rank", "state", "elapsed", "IR files"):
            table.add_column(col)
        with self._lock:
            running = sorted((r for r in self._rows.values() if r[0].state is RankState.RUNNING),
                             key=lambda item: item[0].rank)
            now = time.monotonic()
            for result, n_files in running[:16]:
                elapsed = now - self._started.get(result.rank, now)
                table.add_row(str(result.rank), Text(result.state.value, style=_STYLE[result.state]),
                              f"{elapsed:5.1f} s", str(n_files))
            if len(running) > 16:
                table.add_row("...", f"{len(running) - 16} more", "", "")
        return Group(self._bar, table) if running else self._bar
