"""The Jinja2 environment of the report's templates (package data under ``templates/``)."""
from __future__ import annotations

from functools import lru_cache

import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("msinspect.report", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "svg", "j2"]),
                              trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
