"""The report's first section: what a user asks first, from the analyses the rest of the page
shows in full. How the job is cut (ranks, whether the parallel pass ran, pipeline stages, the
device matrices of the weights' layouts, the groups each kind of communication runs over), the
wire bytes each rank sends per step, the weights each rank holds, and what is wrong: first the
expectations of ``--spec`` that failed, then anything suspicious, first of all a trained weight
held by several ranks whose gradient no collective sums over them
(:mod:`msinspect.analysis.rank.gradsync`)."""
from __future__ import annotations

from msinspect.errors import shown_path
from msinspect.ranks_text import ranks_text
from msinspect.report.tables import compressed_names, text
from msinspect.schema import is_missing

#: Rank lists shown per kind of communication before "... N more".
GROUPS_SHOWN = 8


def stage_of(analysis, rank) -> tuple[int, ...] | None:
    """The ranks of ``rank``'s pipeline stage, else the job's; None where neither is known."""
    return analysis.stages.get(rank) or (tuple(analysis.world) if analysis.world else None)


def _cut(analysis, rolled, rank_groups, run) -> list[tuple[str, str]]:
    facts = []
    read = [r.rank for r in analysis.results if r.rank is not None]
    world = len(analysis.world) if analysis.world else None
    stage = analysis.plan.stage if analysis.plan is not None else None
    facts.append(("ranks", (f"{world} in the job; " if world else "the job's count cannot be told; ")
                  + f"{len(read)} read: {ranks_text(read, word=True)}" + (f", at {stage}" if stage else "")))
    planner = {r.planner for r in analysis.results if r.error is None}
    if planner == {False}:
        facts.append(("parallel pass", "did not run (no parallel mode): MindSpore cut nothing and inserted no "
                      "communication; each rank runs the whole network, on what the job's own code gives it"))
    elif planner == {True}:
        facts.append(("parallel pass", "ran: operators are cut by their strategies, with the communication "
                      "MindSpore inserted between them"))
    if run["pipeline"]:
        facts.append(("pipeline stages", f"{len(run['pipeline'])}: " + " | ".join(f"ranks {s}" for s in run["pipeline"])
                      if len(run["pipeline"]) > 1 else f"none (one stage: ranks {run['pipeline'][0]})"))
    else:
        facts.append(("pipeline stages", f"cannot tell: {_no_stages(analysis)}"))
    matrices = rolled.weights.matrices
    if matrices:
        parts = [(f"ranks {ranks_text(where)}: " if where and len(matrices) > 1 else "")
                 + ", ".join(f"{text(m)} for {n} weight{'s' if n > 1 else ''}" for m, n in counts.most_common())
                 for where, counts in matrices.values()]
        facts.append(("device matrices of the weights' layouts", " | ".join(parts)))
    for kind, (lists, unknown, ops) in rolled.comm.cut.items():
        lists = sorted(lists.values())
        shown = [ranks_text(g) for g in lists[:GROUPS_SHOWN]]
        more = f" ... {len(lists) - GROUPS_SHOWN} more" if len(lists) > GROUPS_SHOWN else ""
        cannot = f" (and {unknown} operator(s) whose group cannot be told)" if unknown else ""
        facts.append((f"{kind} communication ({', '.join(sorted(ops))})",
                      (" | ".join(shown) + more + cannot) or "group cannot be told"))
    if rank_groups:
        facts.append(("ranks with the same graph", " | ".join(g["ranks_text"] for g in rank_groups
                                                               if g["name"] != "in no group")))
    return facts


def _no_stages(analysis) -> str:
    """Why the pipeline stages cannot be told: the analysis' own reason, else the job's rank
    count unknown, else ranks read at another stage or not read."""
    if analysis.stages_note:
        return analysis.stages_note
    if not analysis.world:
        return "the job's rank count cannot be told (msinspect report --world N states it)"
    return "not every rank was read at one stage"


def _wire(rolled) -> list[dict]:
    """Per rank read: the wire bytes it sends per step (known ones summed), how many of its
    collectives have no byte count and why, and the bytes by kind; ranks that agree merged."""
    return [{"ranks": ranks_text(ranks), "wire": key[0], "missing": key[1],
             "by_kind": " · ".join(f"{kind} {n:,}" for kind, n in sorted(key[2], key=lambda kv: -kv[1])),
             **rolled.wire_details[key]} for key, ranks in rolled.wire.items()]


def _weights(rolled) -> list[dict]:
    """Per rank read: the weights it holds (those the optimizer updates, whose gradient a
    collective sums, or that a strategy reads), their count and bytes at the rank, and their names
    by shape; ranks holding the same names and shapes merged."""
    out = []
    for held, ranks in rolled.held.items():
        by_shape: dict[tuple, list[str]] = {}
        for param, shape, _ in held:
            by_shape.setdefault(shape, []).append(param)
        sizes = [b for _, _, b in held]
        out.append({"ranks": ranks_text(ranks), "count": len(held),
                    "bytes": sum(sizes) if not any(is_missing(b) for b in sizes) else None,
                    "shapes": [(text(shape), ", ".join(compressed_names(names))) for shape, names in by_shape.items()]})
    return out


def _suspicious(analysis, rolled, rank_groups) -> tuple[list[dict], list[str]]:
    """What looks wrong (each ``{title, detail}``), and what was checked (sentences)."""
    found, checked = [], []
    sync = rolled.sync
    for (replicas, update, source), (_, names, first) in sorted(sync.bad.items(), key=lambda kv: kv[1][0]):
        names = list(names)
        held = "held whole" if source == "whole" else "the same slice held"
        found.append({
            "kind": "gradient", "params": names,
            "title": (f"{len(names)} weight{'s' if len(names) > 1 else ''} replicated without gradient "
                      f"synchronisation: {', '.join(compressed_names(names))}"),
            "detail": (f"{held} by ranks {ranks_text(replicas)}, each updated by its own {update} with the "
                       f"gradient of its own data: no collective sums the gradient over the ranks holding the "
                       f"same copy, so the copies drift apart from the first step on. Sum it over ranks "
                       f"{ranks_text(replicas)} (an AllReduce of each gradient, e.g. nn.DistributedGradReducer, "
                       f"or a data-parallel mode, where MindSpore inserts it). Rank {int(first['rank'])}: "
                       f"{update} at {shown_path(first['file'])}:{int(first['update_line'])}.")})
    if sync.rows:
        n = len(sync.params)
        verdicts = sync.verdicts
        whys = [sync.whys[i] for i in sorted(sync.whys)]
        checked.append(f"{n} trained weight{'s' if n != 1 else ''} checked for gradient synchronisation: "
                       + (f"{len(verdicts['synchronised'])} summed over their "
                          f"replicas, {len(verdicts['not replicated'])} held by one "
                          f"rank each, {len(verdicts['not synchronised'])} not synchronised")
                       + (f"; {len(verdicts['cannot tell'])} cannot tell ({'; '.join(dict.fromkeys(whys))})"
                          if verdicts["cannot tell"] else ""))
    else:
        checked.append("no weight updated by an optimizer step was found in the files read: gradient "
                       "synchronisation not checked")
    for group in rank_groups:
        if group["odd"]:
            found.append({"kind": "odd", "params": [], "title": f"ranks of group {group['ranks_text']} differ",
                          "detail": group["odd"]})
    if rolled.strategy_count:
        if rolled.wrong_shapes:
            names = list(rolled.wrong_shapes)
            found.append({"kind": "shapes", "params": [],
                          "title": f"{len(names)} operator(s) whose shapes at the rank are not what their strategy gives",
                          "detail": ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")
                          + f" (ranks {ranks_text(rolled.wrong_ranks)}; the strategies table's shapes_ok column)"})
        checked.append("every operator's shapes at the rank against its strategy")
    recorded = _against_record(analysis)
    if recorded is not None:
        differs, sentence = recorded
        checked.append(sentence)
        if not differs.empty:
            names = list(dict.fromkeys(differs["param"]))
            first = differs.iloc[0]
            found.append({"kind": "record", "params": names,
                          "title": (f"{len(names)} weight{'s' if len(names) > 1 else ''} not as MindSpore's own record "
                                    f"says: {', '.join(compressed_names(names))}"),
                          "detail": f"rank {first['rank']}: {first['param']}: {first['record_says']}"
                                    + (f" (and {len(differs) - 1} more row(s))" if len(differs) > 1 else "")})
    if not analysis.complete:
        found.append({"kind": "incomplete", "params": [], "title": "not every file was read whole",
                      "detail": f"{len(analysis.skipped)} skipped span(s), listed under the run"})
    return found, checked


def _against_record(analysis):
    """(the weight rows that differ from MindSpore's own record, what was checked in words) where
    a rank folder keeps MindSpore's record (:mod:`msinspect.analysis.job.second_opinion`); None where
    none does."""
    from msinspect.analysis.job.second_opinion import compared_rows, verdict_counts

    compared = compared_rows(analysis)
    if compared is None:
        return None
    return compared[compared["record"] == "differs"], (f"{len(compared)} row(s) of weights and graph inputs of the "
                                                        f"ranks that kept "
                                                        f"MindSpore's own record held against it: "
                                                        f"{verdict_counts(compared)}")


def _failed(check_report) -> tuple[list[dict], list[str]]:
    """Each expectation of ``--spec`` that failed, as a finding (what was expected, what was
    found, the first IR line that shows it), and what was checked in words."""
    if check_report is None:
        return [], []
    from msinspect.check import evidence_lines

    found = []
    for o in check_report.failed:
        e = o.expectation
        lines = evidence_lines(o.evidence)
        found.append({"kind": "expectation", "params": [],
                      "title": f"expectation {e.label} failed: {e.kind} {e.target}",
                      "detail": f"expected {o.expected}; found {o.found}" + (f"; {lines[0]}" if lines else "")})
    n = len(check_report.outcomes)
    return found, [f"{n} expectation{'s' if n != 1 else ''} of {shown_path(check_report.spec.path)}: "
                   f"{len(check_report.passed)} passed, {len(check_report.failed)} failed (every one under "
                   f"Expectations, with its evidence)"]


def headline(failed: list[dict], suspicious: list[dict], checked_spec: bool) -> str:
    """The section's first words: failed expectations first, then what looks wrong."""
    said = []
    if failed:
        said.append(f"{len(failed)} expectation{'s' if len(failed) > 1 else ''} of the spec failed")
    if suspicious:
        said.append(f"{'s' if failed else 'S'}uspicious: {len(suspicious)} finding{'s' if len(suspicious) > 1 else ''}")
    elif failed:
        said.append("nothing else suspicious found")
    else:
        said.append("Nothing suspicious found" + ("; every expectation of the spec passed" if checked_spec else ""))
    return "; ".join(said)


def glance(analysis, rolled, rank_groups, run, check_report=None) -> dict:
    """The section's content (see the module), from every rank's rows folded once
    (:func:`msinspect.report.rollup.roll_up`); with a :class:`~msinspect.check.CheckReport`,
    the expectations that failed come first."""
    suspicious, checked = _suspicious(analysis, rolled, rank_groups)
    failed, spec_checked = _failed(check_report)
    return {"cut": _cut(analysis, rolled, rank_groups, run), "wire": _wire(rolled),
            "weights": _weights(rolled), "findings": failed + suspicious, "alarm": bool(failed or suspicious),
            "headline": headline(failed, suspicious, check_report is not None), "checked": spec_checked + checked}
