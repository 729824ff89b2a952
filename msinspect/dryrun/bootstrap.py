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

MindSpore's own record of its layouts is kept for every compile, in the rank's dump folder
(``$MS_DEV_SAVE_GRAPHS_PATH/rank_N/``), ``K`` counting the compiles of this worker that wrote
something (a file name is never reused):

* ``parameter_layout_K.json``: what ``GraphExecutor_.get_parameter_layout(phase)`` returns after
  the compile (``Cell.parameter_layout_dict``), as JSON (:func:`_layout_json`);
* ``strategy_K.ckpt`` and ``group_info_K.pb``: MindSpore's strategy checkpoint (with
  ``only_trainable_params`` False: optimizer states too) and group checkpoint, which MindSpore
  writes during the compile where it is told to. The worker tells it so for each compile where
  the script set no file of its own, in the global context or, for an ``AutoParallel`` cell (whose
  settings replace the global context inside the compile), in the settings the cell applies.
  Where the script set its own file, it is left alone, and ``OWN_RECORD_MARK`` names it.

Each compile that recorded something prints ``RECORD_MARK`` and the file names; a failure to
record prints ``RECORD_FAILED_MARK`` and why, and never stops the compile. The launcher's run
record reads these lines (:mod:`msinspect.dryrun.record`); msinspect reads the files with
:mod:`msinspect.mindspore.records` (whose file-name patterns these names follow).
"""
import functools
import json
import os
import runpy
import sys

BUILD_DEVICE = "MSINSPECT_BUILD_DEVICE"
#: Printed to the worker's log when the build phase starts (the launcher's report reads it).
BUILD_MARK = "msinspect dry run: building the network on the CPU device; compiling it for"
#: Printed to the worker's log, with the mode, when a graph is compiled in another parallel mode
#: than the last one printed (the launcher's run record reads it).
PARALLEL_MARK = "msinspect dry run: parallel mode"
#: Printed with the file names (in the rank folder) after a compile that recorded its layouts.
RECORD_MARK = "msinspect dry run: recorded"
#: Printed with what and where when the script saves a record itself (the worker leaves it alone).
OWN_RECORD_MARK = "msinspect dry run: the script saves its own"
#: Printed with the reason when the worker could not record a compile's layouts.
RECORD_FAILED_MARK = "msinspect dry run: could not record"
#: The record files of compile K (msinspect.mindspore.records reads these names).
LAYOUT_NAME, STRATEGY_NAME, GROUP_NAME = "parameter_layout_{}.json", "strategy_{}.ckpt", "group_info_{}.pb"
#: The layout file's ``format`` (msinspect.mindspore.records.LAYOUT_FORMAT) and what each position
#: of a layout entry holds in MindSpore 2.10.
LAYOUT_FORMAT = "msinspect parameter layout 1"
LAYOUT_FIELDS = ("device_matrix", "tensor_map", "slice_shape", "field_size", "uniform_split", "opt_shard_group",
                 "full_shape", "slice_shape_after_reshape", "pipeline_shared", "is_send", "peer_rank", "sr_tag")


def _wrap_compiles(graph_api, wrap) -> None:
    """Put ``wrap(compile, cell_executor)`` in place of the compile method of both of MindSpore's
    graph executors (``_CellGraphExecutor``'s takes the cell first: ``cell_executor``), keeping the
    method's name, docstring and ``__wrapped__``."""
    for name in ("_CellGraphExecutor", "_JitExecutor"):
        cls = getattr(graph_api, name, None) if graph_api is not None else None
        if cls is not None and hasattr(cls, "compile"):
            original = cls.compile
            cls.compile = functools.update_wrapper(wrap(original, name == "_CellGraphExecutor"), original)


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

        return compile

    _wrap_compiles(graph_api, telling)


def _rank_folder():
    """The rank's dump folder (``$MS_DEV_SAVE_GRAPHS_PATH/rank_N``), or None outside a dry run."""
    root, rank = os.environ.get("MS_DEV_SAVE_GRAPHS_PATH"), os.environ.get("RANK_ID")
    if not root or rank is None or not rank.isdigit():
        return None
    return os.path.join(root, f"rank_{rank}")


def _plain(value):
    """A layout entry's value as JSON holds it: tuples as lists, anything else as text."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _layout_json(layouts, *, number, phase, parallel_mode, pipeline_stages, strategy_file):
    """The layout file's object: the dictionary MindSpore returned, each entry's list as it is
    (its positions named by ``fields``), and what the compile was."""
    import mindspore

    return {
        "format": LAYOUT_FORMAT,
        "what": "GraphExecutor_.get_parameter_layout(phase) after one compile (Cell.parameter_layout_dict)",
        "fields": list(LAYOUT_FIELDS),
        "compile": number, "rank": int(os.environ["RANK_ID"]),
        "rank_size": int(os.environ["RANK_SIZE"]) if os.environ.get("RANK_SIZE", "").isdigit() else None,
        "phase": str(phase), "parallel_mode": parallel_mode, "pipeline_stages": pipeline_stages,
        "strategy_checkpoint": strategy_file, "mindspore": getattr(mindspore, "__version__", None),
        "layouts": {str(name): _plain(entry) for name, entry in dict(layouts).items()},
    }


def _layout_text(body):
    """The layout file's text: JSON, one line a field and one line a parameter."""
    head = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in body.items() if k != "layouts"]
    entries = [f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v)}" for k, v in body["layouts"].items()]
    return "{\n" + ",\n".join(head + [' "layouts": {\n' + ",\n".join(entries) + "\n }"]) + "\n}\n"


def _hook_records():
    """Record MindSpore's layouts at every compile (the module docstring's list)."""
    folder = _rank_folder()
    if folder is None:
        return
    import mindspore
    from mindspore.parallel import _auto_parallel_context as parallel_context

    graph_api = _graph_api()
    context = parallel_context.auto_parallel_context()
    setters = parallel_context._set_auto_parallel_context_func_map
    # During a compile: compile K's file names, its parallel mode and stage count. Always: the
    # group checkpoint the script set (MindSpore has no getter for it), what was told.
    state = {"strategy": None, "group": None, "mode": None, "stages": None, "depth": 0,
             "script_strategy": None, "script_group": "", "told": set(), "phases": set()}
    ours = set()

    def fail(what, exc):
        print(f"{RECORD_FAILED_MARK} {what}: {type(exc).__name__}: {exc}", flush=True)

    def own(what, path):
        if (what, path) not in state["told"]:
            state["told"].add((what, path))
            print(f"{OWN_RECORD_MARK} {what}: {path}", flush=True)

    def number():
        """The next compile number: one above that of every record file in the folder."""
        taken = [-1]
        for name in os.listdir(folder) if os.path.isdir(folder) else ():
            for pattern in (LAYOUT_NAME, STRATEGY_NAME, GROUP_NAME):
                head, tail = pattern.split("{}")
                middle = name[len(head):len(name) - len(tail)] if name.startswith(head) and name.endswith(tail) else ""
                if middle.isdigit():
                    taken.append(int(middle))
        return max(taken) + 1

    def strategy_value(key, value):
        """``value`` of a strategy-checkpoint setting, with this compile's file where it names none."""
        config = dict(value) if key == "strategy_ckpt_config" and isinstance(value, dict) else None
        path = config.get("save_file") if config is not None else value
        if path and path not in ours:
            own("strategy checkpoint", path)
            if state["depth"]:
                state["script_strategy"] = path
            return value
        if not state["depth"] or (config is not None and "save_file" not in config):
            return value
        if config is None:
            return state["strategy"]
        return {**config, "save_file": state["strategy"], "only_trainable_params": False}

    def group_value(value):
        if value and value not in ours:
            state["script_group"] = value
            own("group checkpoint", value)
            return value
        state["script_group"] = ""
        return state["group"] if state["depth"] else value

    # Every setting of the auto-parallel context by name (set_auto_parallel_context, and the
    # settings an AutoParallel cell applies, inside its compile or Model's) passes this table.
    def watching(key, setter):
        def set_value(value):
            try:
                if key in ("strategy_ckpt_config", "strategy_ckpt_save_file"):
                    value = strategy_value(key, value)
                elif key == "group_ckpt_save_file":
                    value = group_value(value)
                elif state["depth"]:
                    state["mode" if key == "parallel_mode" else "stages"] = value
            except Exception as exc:  # noqa: BLE001 - recording must never stop a setting
                fail(f"setting {key}", exc)
            return setter(value)

        return set_value

    for key in ("strategy_ckpt_config", "strategy_ckpt_save_file", "group_ckpt_save_file", "pipeline_stages",
                "parallel_mode"):
        if key in setters:
            setters[key] = watching(key, setters[key])
    real_reset = type(context).reset

    def reset(self, *args, **kwargs):
        state["script_group"] = ""
        return real_reset(self, *args, **kwargs)

    type(context).reset = reset

    def ask(n):
        """Point MindSpore's save files at compile ``n``'s names where the script set none;
        return the steps that undo it."""
        state["strategy"] = os.path.join(folder, STRATEGY_NAME.format(n))
        state["group"] = os.path.join(folder, GROUP_NAME.format(n))
        ours.update((state["strategy"], state["group"]))
        os.makedirs(folder, exist_ok=True)
        state["script_strategy"] = None
        state["mode"] = mindspore.get_auto_parallel_context("parallel_mode")
        state["stages"] = mindspore.get_auto_parallel_context("pipeline_stages")
        undo = []
        current = context.get_strategy_ckpt_save_file()
        if current and current not in ours:
            own("strategy checkpoint", current)
            state["script_strategy"] = current
        else:
            trainable = context.get_strategy_ckpt_config().get("only_trainable_params", True)
            context.set_strategy_ckpt_config({"save_file": state["strategy"], "only_trainable_params": False})
            undo.append(lambda: context.set_strategy_ckpt_config({"save_file": "", "only_trainable_params": trainable}))
        if state["script_group"]:
            own("group checkpoint", state["script_group"])
        else:
            context.set_group_ckpt_save_file(state["group"])
            undo.append(lambda: context.set_group_ckpt_save_file(""))
        return undo

    def record(n, executor, phase):
        """Write compile ``n``'s layout file; print the files compile ``n`` recorded."""
        if phase in state["phases"]:
            return
        state["phases"].add(phase)
        written = []
        if str(state["mode"]) in ("semi_auto_parallel", "auto_parallel"):
            getter = getattr(getattr(executor, "_graph_executor", None), "get_parameter_layout", None)
            if getter is None:
                from mindspore._c_expression import GraphExecutor_
                getter = GraphExecutor_.get_instance().get_parameter_layout
            layouts = getter(phase)
            if layouts:
                strategy = state["strategy"]
                body = _layout_json(layouts, number=n, phase=phase, parallel_mode=state["mode"],
                                    pipeline_stages=state["stages"],
                                    strategy_file=os.path.basename(strategy) if strategy and os.path.exists(strategy)
                                    else state["script_strategy"])
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, LAYOUT_NAME.format(n)), "x", encoding="utf-8") as out:
                    out.write(_layout_text(body))
                written.append(LAYOUT_NAME.format(n))
        written += [os.path.basename(p) for p in (state["strategy"], state["group"]) if p and os.path.exists(p)]
        if written:
            print(f"{RECORD_MARK} {' '.join(written)}", flush=True)

    def recording(compile_method, cell_executor):
        def compile(self, *args, **kwargs):
            if state["depth"]:  # a compile inside a compile: the outer one records
                return compile_method(self, *args, **kwargs)
            n, undo = None, []
            try:
                n = number()
                undo = ask(n)
            except Exception as exc:  # noqa: BLE001 - recording must never stop a compile
                fail("asking MindSpore for its strategy checkpoint", exc)
            state["depth"] += 1
            try:
                result = compile_method(self, *args, **kwargs)
            finally:
                state["depth"] -= 1
                for step in undo:
                    try:
                        step()
                    except Exception as exc:  # noqa: BLE001
                        fail("restoring the strategy checkpoint settings", exc)
            try:
                phase, fresh = result if cell_executor else (result, True)
                if fresh and n is not None:
                    record(n, self, phase)
            except Exception as exc:  # noqa: BLE001 - recording must never stop a compile
                fail("the parameter layout", exc)
            return result

        return compile

    _wrap_compiles(graph_api, recording)


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

    def compiling(compile_method, cell_executor):
        def compile(self, *args, **kwargs):
            if state["phase"] == "build":
                state["phase"] = "compile"
                switch(state["target"])
            return compile_method(self, *args, **kwargs)

        return compile

    context.get_context = mindspore.get_context = get_context
    context.set_context = mindspore.set_context = set_context
    if real_set_device is not None:
        mindspore.set_device = set_device
    management.init = communication.init = init
    _wrap_compiles(graph_api, compiling)


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
    try:
        _hook_records()
    except Exception as exc:  # noqa: BLE001 - the script runs regardless; the log says why
        print(f"{RECORD_FAILED_MARK} (no records for this rank): {type(exc).__name__}: {exc}", flush=True)
    if os.environ.get(BUILD_DEVICE, "CPU").upper() == "CPU":
        _hook_build_on_cpu()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv)
