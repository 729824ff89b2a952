"""How a dry-run worker runs the user's script: ``python bootstrap.py SCRIPT [ARGS...]``.

Run by path by the worker's interpreter (msinspect's own, or another environment's with
``--python``): it imports only the standard library and MindSpore, never msinspect.

The dry run's GPU is a stand-in: MindSpore's planner compiles for it, but it cannot execute an
operation. Scripts (and libraries such as MindFormers, whose ``LlamaForCausalLM`` runs
``Tensor([0]).reshape(1, 1)`` while it is built) may run operations eagerly (PyNative) between
``init()`` and the first compile. So that such scripts run unchanged, with
``MSINSPECT_BUILD_DEVICE=CPU`` (the launcher's default) the worker builds the network on the CPU
device and compiles it for the planner's:

1. until ``mindspore.communication.init()`` returns, nothing changes (``init()`` needs the
   GPU target to start the dry run's collectives);
2. from then on until the first graph compile (the *build*), operations run on the CPU device,
   while ``get_context("device_target")`` still answers the planner's target, so that Python code
   that chooses by device (MindSpore's loss-scale and optimizer cells, MindFormers) builds the
   same network as without this step; a ``set_device`` / ``set_context(device_target=...)`` of the
   script in this phase is kept for the compile;
3. the first compile of a cell or a ``jit`` function (``_CellGraphExecutor.compile``,
   ``_JitExecutor.compile``) sets the device back to the planner's, and it stays so.

``MSINSPECT_BUILD_DEVICE=GPU`` runs the script as it is (the build on the stand-in GPU).

Either way the worker prints the parallel mode each graph is compiled in, when it differs from
the last one printed (``PARALLEL_MARK semi_auto_parallel``): the launcher's run record reads it.
"""
import os
import runpy
import sys

BUILD_DEVICE = "MSINSPECT_BUILD_DEVICE"
#: Printed to the worker's log when the build phase starts (the launcher's report reads it).
BUILD_MARK = "msinspect dry run: building the network on the CPU device; compiling it for"
#: Printed to the worker's log, with the mode, when a graph is compiled in another parallel mode
#: than the last one printed (the launcher's run record reads it).
PARALLEL_MARK = "msinspect dry run: parallel mode"


def _graph_api():
    """MindSpore's module of the graph executors (``mindspore.graph.api`` from 2.9 on)."""
    try:
        from mindspore.graph import api
    except ImportError:  # pragma: no cover - older layout
        try:
            from mindspore.common import api
        except ImportError:
            return None
    return api


def _hook_parallel_mode():
    """Print ``PARALLEL_MARK mode`` before a graph compile when the mode differs from the last one
    printed: the auto-parallel context as MindSpore reads it at that compile (an ``AutoParallel``
    cell's own mode, else the global context); ``auto_parallel`` with its search mode."""
    import mindspore

    get = getattr(mindspore, "get_auto_parallel_context", None)
    if get is None:  # pragma: no cover - older releases
        from mindspore import context
        get = context.get_auto_parallel_context
    graph_api = _graph_api()
    last = []

    def mode_of(obj):
        if obj is not None and obj.__class__.__name__ == "AutoParallel":
            if getattr(obj, "_device_num", None) == 1:
                return "stand_alone"
            mode = getattr(obj, "_parallel_mode", "")
            return "semi_auto_parallel" if mode == "semi_auto" else f"auto_parallel ({mode})"
        mode = get("parallel_mode")
        return f"auto_parallel ({get('search_mode')})" if mode == "auto_parallel" else str(mode)

    def telling(compile_method, cell_executor):
        def compile(self, *args, **kwargs):
            try:
                mode = mode_of(args[0] if cell_executor and args else None)
                if not last or last[-1] != mode:
                    last.append(mode)
                    print(f"{PARALLEL_MARK} {mode}", flush=True)
            except Exception:  # noqa: BLE001 - telling the mode must never stop a compile
                pass
            return compile_method(self, *args, **kwargs)

        compile.__wrapped__ = compile_method
        compile.__name__ = getattr(compile_method, "__name__", "compile")
        compile.__doc__ = getattr(compile_method, "__doc__", None)
        return compile

    for name in ("_CellGraphExecutor", "_JitExecutor"):
        cls = getattr(graph_api, name, None) if graph_api is not None else None
        if cls is not None and hasattr(cls, "compile"):
            cls.compile = telling(cls.compile, name == "_CellGraphExecutor")


def _hook_build_on_cpu():
    """Install the three steps of the module docstring."""
    import mindspore
    import mindspore.communication as communication
    import mindspore.communication.management as management
    from mindspore import context

    try:
        from mindspore.common import api as graph_api
    except ImportError:  # pragma: no cover - older layout
        graph_api = None
    try:
        from mindspore._c_expression import MSContext
    except ImportError:  # pragma: no cover
        MSContext = None

    real_get_context = context.get_context
    real_set_context = context.set_context
    real_set_device = getattr(mindspore, "set_device", None)
    real_init = management.init
    state = {"phase": "start", "target": None}

    def switch(target):
        """Set the device target of MindSpore's context (the one operations run on)."""
        if MSContext is not None and hasattr(MSContext.get_instance(), "set_device_target_inner"):
            MSContext.get_instance().set_device_target_inner(target)
        else:  # pragma: no cover - other releases
            real_set_context(device_target=target)

    def get_context(attr_key):
        if state["phase"] == "build" and attr_key == "device_target":
            return state["target"]
        return real_get_context(attr_key)

    def set_context(**kwargs):
        if state["phase"] == "build" and kwargs.get("device_target") not in (None, "CPU"):
            state["target"] = kwargs.pop("device_target")
        return real_set_context(**kwargs)

    def set_device(device_target, device_id=None):
        if state["phase"] == "build" and device_target != "CPU":
            state["target"] = device_target
            return None
        return real_set_device(device_target, device_id)

    def init(*args, **kwargs):
        result = real_init(*args, **kwargs)
        if state["phase"] == "start":
            state["target"] = real_get_context("device_target")
            if state["target"] != "CPU":
                print(f"{BUILD_MARK} {state['target']}", flush=True)
                state["phase"] = "build"
                switch("CPU")
        return result

    def compiling(compile_method):
        def compile(self, *args, **kwargs):
            if state["phase"] == "build":
                state["phase"] = "compile"
                switch(state["target"])
            return compile_method(self, *args, **kwargs)

        compile.__wrapped__ = compile_method
        compile.__name__ = getattr(compile_method, "__name__", "compile")
        compile.__doc__ = getattr(compile_method, "__doc__", None)
        return compile

    context.get_context = mindspore.get_context = get_context
    context.set_context = mindspore.set_context = set_context
    if real_set_device is not None:
        mindspore.set_device = set_device
    management.init = communication.init = init
    for name in ("_CellGraphExecutor", "_JitExecutor"):
        cls = getattr(graph_api, name, None) if graph_api is not None else None
        if cls is not None and hasattr(cls, "compile"):
            cls.compile = compiling(cls.compile)


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bootstrap.py SCRIPT [ARGS...]")
    script = os.path.abspath(argv[1])
    sys.argv = [argv[1], *argv[2:]]
    sys.path[0] = os.path.dirname(script)  # as `python SCRIPT` would have it
    try:
        _hook_parallel_mode()
    except Exception:  # noqa: BLE001 - the script runs regardless; the record says "unknown"
        pass
    if os.environ.get(BUILD_DEVICE, "CPU").upper() == "CPU":
        _hook_build_on_cpu()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv)
