"""Small display helpers shared by the commands that print tables (no analysis here)."""
from __future__ import annotations


def short_scope(scope, parts: int = 2) -> str:
    """The last ``parts`` parts of a scope, for narrow displays: ``.../layer1-Dense``."""
    if not isinstance(scope, str) or scope.count("/") < parts:
        return scope if isinstance(scope, str) else ""
    return ".../" + "/".join(scope.split("/")[-parts:])
