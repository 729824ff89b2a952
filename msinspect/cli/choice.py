"""An option's fixed set of values (click's ``Choice``) that names the close ones when a value is
none of them: ``--kind optimiser`` gets ``... (did you mean optimizer?)``, as a misspelt ``--op``
does."""
from __future__ import annotations

import click

from msinspect.analysis.job.op_rows import close_names


class Choice(click.Choice):
    """:class:`click.Choice`, with the close values named in its error."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as err:
            close = close_names(str(value), [str(choice) for choice in self.choices])
            if close:
                err.message = f"{err.message} (did you mean {' or '.join(close)}?)"
            raise
