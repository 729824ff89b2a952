"""Pictures of a parsed IR file with graphviz: the operators around a selected one (or a whole
subgraph), their strategies and shapes, and the communication the parallel pass inserted.

:func:`render` builds a :class:`graphviz.Digraph`; :func:`write` saves its ``.dot`` source and,
when graphviz's ``dot`` program is installed, the SVG or PNG picture.

What is drawn:

- real operators (boxes): name, op, strategy with who set it (user / planner), input and output
  shapes, marked *per-rank* or *global* by the file's stage; the selected operators in bold;
- communication and redistribution operators (red hexagons / orange boxes): op, kind
  (forward, redistribution, gradient ...), the ranks of their group, the tensor they move;
- parameters (small grey ellipses) with their shapes;
- edges labelled with the shape of the tensor they carry.

Plumbing (``Load``, ``Depend``, ``UpdateState``, ``MakeTuple``, ``TupleGetItem`` ...) is collapsed
into the edges unless asked for, and the gradient graph is left out unless asked for.
"""
from __future__ import annotations

from msinspect.lazy import lazy_exports

__all__ = ["FORMATS", "INSTALL_HINT", "DotNotFoundError", "OutputExistsError", "Picture", "default_name",
           "dot_available", "dot_path_for", "output_path", "render", "render_around", "render_dump", "write"]

# imported on first use: the errors and file names (msinspect.render.files) cost no networkx or
# graphviz, so `msinspect --help` and every command's error handling stay light
_LAZY = {name: ("msinspect.render.dot", name) for name in ("render", "render_around")}
_LAZY |= {name: ("msinspect.render.files", name) for name in ("FORMATS", "INSTALL_HINT", "DotNotFoundError",
                                                               "OutputExistsError", "dot_available", "dot_path_for",
                                                               "write")}
_LAZY |= {name: ("msinspect.render.pictures", name) for name in ("Picture", "default_name", "output_path",
                                                                  "render_dump")}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
