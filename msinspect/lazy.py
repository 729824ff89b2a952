"""Names a package exports but imports on first use (PEP 562): ``import msinspect`` and
``import msinspect.analysis`` pay for none of Lark, networkx or pandas until a name is used."""
from __future__ import annotations

import importlib
from typing import Callable


def lazy_exports(package: str, names: dict[str, tuple[str, str]],
                 public: list[str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``names`` maps each exported name to
    the (module, attribute) it comes from; ``public`` is the package's ``__all__``."""
    def __getattr__(name: str):
        if name in names:
            module, attr = names[name]
            return getattr(importlib.import_module(module), attr)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(public))

    return __getattr__, __dir__
