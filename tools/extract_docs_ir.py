"""Extract every MindSpore IR text sample from MindSpore's documentation into fixtures/docs_ir/.

    python tools/extract_docs_ir.py DOCS_GIT_DIR [--out fixtures/docs_ir]

DOCS_GIT_DIR is a (bare) clone of mindspore-ai/docs. For every release ref in it (``master``,
the ``rN...`` branches, the ``vN...`` tags; ``--ref-glob`` / ``--any-ref`` pick others) the tool reads every ``.md``
page and every Markdown cell of every ``.ipynb`` page, takes each fenced code block that shows
``.ir`` text (an ``# IR entry`` header, ``subgraph attr:``, ``subgraph @name(``, a node line
``%3(name) = ...``, ``# Total subgraphs``), removes the line numbers the page adds in front of
each line where it does so, and keeps one file per distinct text with every place it was found.

Each sample is sorted, from its text alone and never from what msinspect's parser makes of it:

* ``complete/``: a whole dump as MindSpore printed it (a header, nothing elided, and the
  subgraph count it states matches the ``subgraph @`` lines it shows): must parse strictly. The
  blank line the dumper writes at the end, which pages drop, is restored.
* ``excerpt/``: a part of a dump: ``...`` elision lines, no header, or fewer subgraphs than it
  states. Must parse leniently with diagnostics exactly at the elision lines.
* left out (listed in the manifest with the reason, no file): text a person edited by hand
  (``<-`` annotations, Markdown back-quotes, renumbered or merged lines, prose inside the
  dump), format templates, and other dumpers' formats (the ``.dat`` ``funcgraph`` text).

``MANIFEST.toml`` lists every sample (kept or left out) with its class, reason, the refs and
page paths, code block index and line where it was found. A re-run replaces what an earlier
run wrote and refuses (exit 2) to write into a folder holding anything else. Re-running on the
same docs clone gives the same bytes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "fixtures" / "docs_ir"
DEFAULT_REF_GLOBS = ("refs/heads/master", "refs/heads/r*", "refs/tags/v*")
# Of those, the release refs: master, rX.Y... branches, vX.Y... tags (not revert-merge-* ...).
RELEASE_REF = re.compile(r"^(?:master|r\d[\w.-]*|v\d[\w.-]*)$")

# A block is IR when one of its lines (line numbers removed) is one of these.
IR_LINE = re.compile(
    r"^(?:#\s*IR entry\b|#\s*Total subgraphs?\b|subgraph attr:|subgraph @\S+\(|"
    r"\s*%\d+\([^)]*\)\s*=\s|\s*%para\d+_\S*\s*:\s*<|Total number of cnodes:)"
)
# Cheap pre-filter for git grep (pages with none of these are not read).
GREP_PATTERN = r"IR entry|subgraph attr:|subgraph @|Total subgraph|%[0-9]+\([^)]*\) = |%para[0-9]+_"

FENCE_OPEN = re.compile(r"^(?P<indent> {0,3}|\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
LINE_NUMBER = re.compile(r"^ *(\d+)(?: (.*))?$")
# A line that is only an elision mark: "...", "......", "…", "⋮", ". . .", possibly indented.
ELISION = re.compile(r"^\s*(?:\.{2,}|…+|⋮|(?:\. ){2,}\.)\s*$")
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@dataclass
class Place:
    """Where one copy of a sample was found."""

    ref: str
    """Branch or tag, e.g. ``r2.3`` or ``v1.1.0``."""
    page: str
    """Path of the page in the docs repository."""
    block: int
    """1-based index of the code block among the page's fenced blocks (per cell for notebooks)."""
    line: int
    """1-based line of the opening fence in the page (in the cell for notebooks)."""
    cell: int | None = None
    """0-based notebook cell index, for ``.ipynb`` pages."""
    line_numbers_removed: bool = False
    """The page prefixed every line with its number; the sample has them removed."""


@dataclass
class Sample:
    """One distinct IR text and every place it was found."""

    text: str
    places: list[Place] = field(default_factory=list)
    renumbered: str = ""
    """Why the page's own line numbers show a cut or an edit (gaps, repeats), if they do."""
    kind: str = ""
    reason: str = ""
    name: str = ""

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# git


def git(git_dir: Path, *args: str) -> str:
    out = subprocess.run(["git", f"--git-dir={git_dir}", *args], check=False,
                         capture_output=True, text=True, encoding="utf-8", errors="replace")
    if out.returncode not in (0, 1):  # 1: git grep found nothing
        raise SystemExit(f"git {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def release_refs(git_dir: Path, globs: tuple[str, ...], release_only: bool = True) -> list[str]:
    refs = git(git_dir, "for-each-ref", "--format=%(refname)", *globs).split()
    names = {r.removeprefix("refs/heads/").removeprefix("refs/tags/") for r in refs}
    if release_only:
        names = {n for n in names if RELEASE_REF.match(n)}
    return sorted(names, key=ref_order)


def ref_order(ref: str) -> tuple:
    if ref == "master":
        return (1, ())
    parts = re.findall(r"\d+|[a-z]+", ref.lstrip("rv"))
    return (0, tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts))


def pages_with_ir(git_dir: Path, ref: str) -> list[tuple[str, str]]:
    """(path, blob id) of every .md / .ipynb page in ``ref`` that may hold IR text."""
    hits = git(git_dir, "grep", "-l", "-E", GREP_PATTERN, ref, "--", "*.md", "*.ipynb")
    paths = sorted({h.split(":", 1)[1] for h in hits.splitlines() if ":" in h})
    if not paths:
        return []
    tree = git(git_dir, "ls-tree", ref, "--", *paths)
    blobs = {}
    for row in tree.splitlines():
        meta, path = row.split("\t", 1)
        blobs[path] = meta.split()[2]
    return [(p, blobs[p]) for p in paths if p in blobs]


# ---------------------------------------------------------------------------------------------
# code blocks


def fenced_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(1-based fence line, info string, content lines) of every fenced block of Markdown text.

    Content lines lose the fence's indentation, as Markdown renders them."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        close = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body = []
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            line = lines[j]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            j += 1
        blocks.append((i + 1, m["info"].strip(), body))
        i = j + 1
    return blocks


def page_blocks(path: str, text: str):
    """(cell, fence line, block index, info, content lines) of a page's fenced blocks."""
    if path.endswith(".ipynb"):
        try:
            cells = json.loads(text)["cells"]
        except (ValueError, KeyError, TypeError):
            return
        for cell_index, cell in enumerate(cells):
            if cell.get("cell_type") not in ("markdown", "raw"):
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            for index, (line, info, body) in enumerate(fenced_blocks(source), 1):
                yield cell_index, line, index, info, body
        return
    for index, (line, info, body) in enumerate(fenced_blocks(text), 1):
        yield None, line, index, info, body


def strip_line_numbers(body: list[str]) -> tuple[list[str], bool, str]:
    """Remove the ``  12 `` prefixes a page puts before every line of a dump.

    Only when every non-blank line has one. Returns the lines, whether numbers were removed,
    and a note when the numbering is not 1, 2, 3 ... (a gap marks a cut, a repeat an edit)."""
    if not body:
        return body, False, ""
    matches = [LINE_NUMBER.match(line) for line in body if line.strip()]
    if not matches or not all(matches):
        return body, False, ""
    numbers = [int(m[1]) for m in matches]
    lines = []
    for line in body:
        m = LINE_NUMBER.match(line)
        lines.append((m[2] or "") if m else "")
    skips = [f"{a} -> {b}" for a, b in zip(numbers, numbers[1:]) if b > a + 1]
    backs = [f"{a} -> {b}" for a, b in zip(numbers, numbers[1:]) if b <= a]
    notes = []
    if numbers[0] != 1:
        notes.append(f"the page's line numbers start at {numbers[0]}")
    if skips:
        notes.append("the page's line numbers skip " + ", ".join(skips))
    if backs:
        notes.append("the page's line numbers go back (renumbered by hand) " + ", ".join(backs))
    note = "; ".join(notes)
    return lines, True, note


DAT_LINE = re.compile(r"^\s*funcgraph fg_\d+")


def is_ir(lines: list[str]) -> bool:
    """IR text, or the .dat dumper's text (listed as left out, so that nothing is dropped unsaid)."""
    return any(IR_LINE.match(line) or DAT_LINE.match(line) for line in lines)


# ---------------------------------------------------------------------------------------------
# classification (from the text alone)

HEADER = re.compile(r"^#\s*IR entry\s*:")
# analyze_fail.ir starts with a banner instead: "# 1.This file shows the parsed IR info when
# graph evaluating failed ..." up to 2.2, a "# ====" rule from 2.3 on.
ANALYZE_FAIL_BANNER = re.compile(r"^# (?:=+|1\.This file shows the parsed IR info when graph evaluating failed)")
STATED_SUBGRAPHS = re.compile(r"^#\s*Total subgraphs?\s*:\s*(\d+)")
SUBGRAPH_OPEN = re.compile(r"^subgraph @")
# The analyze_fail banner itself says "search the last `------------------------>`".
DUMPER_BACKQUOTES = "`------------------------>`"
ARROW_ANNOTATION = re.compile(r"<-+(?!-*>)|<=+|←|//\s")
NODE_LINE = re.compile(r"^(?P<indent>\s*)%\d+\(")
NAMELESS_NODE = re.compile(r"^\s*%\d+ = ")
TRAILING_COMMENT = re.compile(r"^\s*(?:%\d+\(?.*|Return\(.*)\)\s+#\s*\S")
LOWER_DTYPE = re.compile(r"Tensor\[[a-z]+\d*\]")
BARE_INSTANCE = re.compile(r"^subgraph instance: (?!.* : 0x[0-9a-f]+\s*$)")
TOP_LEVEL = re.compile(r"^(?:%|#|}|subgraph |Return\(|\s|$)")


def elision_lines(text: str) -> list[int]:
    """1-based numbers of the lines that are only an elision mark (``...``)."""
    return [n for n, line in enumerate(text.split("\n"), 1) if ELISION.match(line)]


def hand_edits(lines: list[str]) -> list[str]:
    """Reasons to believe a person wrote or edited the dump text, each with the first line
    concerned. MindSpore's dumper never prints any of these."""
    found = []

    def first(what, pred):
        for n, line in enumerate(lines, 1):
            if pred(n - 1, line):
                found.append(f"{what} (line {n}: {line.strip()[:80]!r})")
                return

    first("Markdown back-quotes inside the dump",
          lambda i, s: "`" in s.replace(DUMPER_BACKQUOTES, ""))
    first("annotation arrows added to the dump", lambda i, s: ARROW_ANNOTATION.search(s) is not None)
    first("comments appended to node lines", lambda i, s: TRAILING_COMMENT.match(s) is not None)
    first("prose in Chinese inside the dump",
          lambda i, s: CJK.search(s) is not None and "# In file" not in s)
    first("node lines without their '(name)' (the dumper prints '%N(name) = ')",
          lambda i, s: NAMELESS_NODE.match(s) is not None)
    first("dtype written in lower case (the dumper prints Int32, Float32)",
          lambda i, s: LOWER_DTYPE.search(s) is not None)
    first("'subgraph instance:' without the graph's address",
          lambda i, s: BARE_INSTANCE.match(s) is not None)
    first("a node line broken over several lines by the page",
          lambda i, s: i > 0 and NODE_LINE.match(lines[i - 1]) is not None and not TOP_LEVEL.match(s))
    inside = False
    for n, line in enumerate(lines, 1):
        if line.startswith("subgraph @") and line.rstrip().endswith("{"):
            inside = True
        elif line.startswith("}"):
            inside = False
        elif inside and (m := NODE_LINE.match(line) or re.match(r"^(?P<indent>\s*)Return\(", line)):
            if m["indent"] != "  ":
                found.append(f"node lines inside a subgraph indented by {len(m['indent'])}, "
                             f"the dumper indents 2 (line {n}: {line.strip()[:80]!r})")
                break
    return found


def template(lines: list[str]) -> bool:
    return any(re.search(r"\[(?:No\.|op_name|debug_name|arg|key)\]", line) for line in lines)


def classify(sample: Sample) -> None:
    lines = sample.text.rstrip("\n").split("\n")
    if template(lines):
        sample.kind, sample.reason = "left_out", "a format template ([No.], [op_name] ...), not a dump"
        return
    if any(re.match(r"^\s*funcgraph fg_", line) for line in lines):
        sample.kind, sample.reason = "left_out", "the .dat dumper's 'funcgraph fg_N' text, not .ir"
        return
    edits = hand_edits(lines)
    if "go back" in sample.renumbered:
        edits.append(sample.renumbered)
    if edits:
        sample.kind, sample.reason = "left_out", "edited by hand: " + "; ".join(edits)
        return
    cuts = []
    elided = elision_lines(sample.text)
    if elided:
        cuts.append(f"'...' elision lines {elided}")
    if sample.renumbered:
        cuts.append(sample.renumbered)
    first_line = next((line for line in lines if line.strip()), "")
    headed = HEADER.match(first_line) or ANALYZE_FAIL_BANNER.match(first_line)
    if not headed:
        cuts.append("no '# IR entry' header: a part of a dump")
    if re.match(r"^# \S+\.ir: #?$", first_line):
        cuts.append(f"its first line is the page's caption naming the file ({first_line!r}), a '#' comment")
    stated = next((int(m[1]) for line in lines if (m := STATED_SUBGRAPHS.match(line))), None)
    shown = sum(1 for line in lines if SUBGRAPH_OPEN.match(line))
    analyze_fail = any("analyze_fail" in line or "evaluation fails" in line for line in lines[:8])
    if headed and stated is not None and stated != shown and not analyze_fail:
        cuts.append(f"states {stated} subgraphs, shows {shown}")
    if headed and not any(line.strip() == "}" for line in lines):
        cuts.append("no subgraph is closed ('}')")
    if cuts:
        sample.kind, sample.reason = "excerpt", "; ".join(cuts)
    else:
        sample.kind, sample.reason = "complete", "whole dump: header, nothing elided" + (
            "" if analyze_fail else f", {shown} subgraphs as stated")
        # MindSpore ends a dump with a blank line after its last block (DumpSubgraph writes "}"
        # and two line ends); a page drops it. Restored, so that the file ends as the dumper's
        # does and a copy cut at a line end can be told from a whole one.
        sample.text = sample.text.rstrip("\n") + "\n\n\n"
        sample.reason += "; the blank line the dumper writes at the end, which the page dropped, restored"


# ---------------------------------------------------------------------------------------------
# naming and writing


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")


def name_for(sample: Sample, taken: set[str]) -> str:
    first = sample.places[0]
    page = Path(first.page)
    lang = "zh" if "zh_cn" in first.page else "en"
    stem = page.stem
    lines = sample.text.split("\n")
    what = ""
    for line in lines[:30]:
        if "analyze_fail" in line or "evaluation fails" in line:
            what = "analyze_fail"
            break
    if not what:
        entry = next((re.sub(r"^#\s*IR entry\s*:\s*@?", "", line) for line in lines if HEADER.match(line)), "")
        if entry:
            what = "entry_" + re.sub(r"^\d+_\d*_?", "", entry.split(".")[0])[:40]
    base = slug(f"{first.ref}_{stem}_{lang}" + (f"_{what}" if what else "") + f"_b{first.block}")
    name = base
    n = 2
    while name in taken:
        name = f"{base}_{n}"
        n += 1
    taken.add(name)
    return name + ".ir"


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


MANIFEST_FIRST_LINE = "# MindSpore IR samples from MindSpore's documentation (mindspore-ai/docs)."


def clear_out(out: Path) -> str | None:
    """Remove what an earlier run wrote to ``out``; a reason instead when ``out`` holds anything
    else (nothing the user had is overwritten)."""
    if not out.exists():
        return None
    if not out.is_dir():
        return f"{out} is not a folder"
    manifest_file = out / "MANIFEST.toml"
    ours = [manifest_file] if manifest_file.is_file() else []
    for kind in ("complete", "excerpt"):
        ours += sorted((out / kind).glob("*.ir"))
    others = [p for p in out.rglob("*") if p.is_file() and p not in ours]
    if others or (ours and not manifest_file.read_text(encoding="utf-8").startswith(MANIFEST_FIRST_LINE)):
        shown = ", ".join(str(p) for p in (others or [manifest_file])[:3])
        return f"{out} holds files this tool did not write ({shown}); give an empty or new --out"
    for p in ours:
        p.unlink()
    return None


def manifest(samples: list[Sample], refs: list[str], git_dir_head: dict[str, str]) -> str:
    out = [
        MANIFEST_FIRST_LINE,
        "# Written by tools/extract_docs_ir.py; do not edit by hand, re-run the tool.",
        "# kind: complete (must parse strictly), excerpt (must parse leniently, diagnostics only",
        "# at the elision lines), left_out (not written: the reason says why).",
        "# Each [[sample.found]] is one place the same text was found: ref (branch or tag), page,",
        "# block (1-based index of the fenced code block in the page, or in the notebook cell),",
        "# line (1-based line of the block's opening fence in the page, or in the cell), cell",
        "# (notebook cell index, 0-based), line_numbers_removed (the page printed a line number",
        "# before every line; the file has them removed, nothing else changed).",
        "",
        "[counts]",
    ]
    for kind in ("complete", "excerpt", "left_out"):
        out.append(f"{kind} = {sum(1 for s in samples if s.kind == kind)}")
    out.append(f"places = {sum(len(s.places) for s in samples)}")
    out += ["", "[refs]", "# every ref searched, with its commit"]
    for ref in refs:
        out.append(f"{toml_str(ref)} = {toml_str(git_dir_head[ref])}")
    for s in samples:
        out += ["", "[[sample]]"]
        out.append(f"file = {toml_str(f'{s.kind}/{s.name}' if s.kind != 'left_out' else '')}")
        out.append(f"name = {toml_str(s.name)}")
        out.append(f"kind = {toml_str(s.kind)}")
        out.append(f"reason = {toml_str(s.reason)}")
        out.append(f"sha256_12 = {toml_str(s.digest)}")
        out.append(f"lines = {s.text.count(chr(10))}")
        if s.kind == "excerpt":
            out.append(f"elision_lines = {elision_lines(s.text)}")
        if s.kind == "left_out":
            out.append("text = " + toml_str(s.text))
        for p in s.places:
            out.append("[[sample.found]]")
            out.append(f"ref = {toml_str(p.ref)}")
            out.append(f"page = {toml_str(p.page)}")
            out.append(f"block = {p.block}")
            out.append(f"line = {p.line}")
            if p.cell is not None:
                out.append(f"cell = {p.cell}")
            out.append(f"line_numbers_removed = {'true' if p.line_numbers_removed else 'false'}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------


def collect(git_dir: Path, refs: list[str]) -> list[Sample]:
    samples: dict[str, Sample] = {}
    per_blob: dict[str, list] = {}
    for ref in refs:
        for path, blob in pages_with_ir(git_dir, ref):
            if blob not in per_blob:
                text = git(git_dir, "cat-file", "blob", blob)
                found = []
                for cell, line, index, info, body in page_blocks(path, text):
                    lines, removed, note = strip_line_numbers(body)
                    if not is_ir(lines):
                        continue
                    while lines and not lines[-1].strip():
                        lines.pop()
                    while lines and not lines[0].strip():
                        lines.pop(0)
                    found.append((cell, line, index, "\n".join(lines) + "\n", removed, note))
                per_blob[blob] = found
            for cell, line, index, text, removed, note in per_blob[blob]:
                sample = samples.setdefault(text, Sample(text=text, renumbered=note))
                sample.places.append(Place(ref, path, index, line, cell, removed))
    return list(samples.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", type=Path, help="a clone (bare or not) of mindspore-ai/docs")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--ref-glob", action="append", default=None,
                    help=f"refs to read (git for-each-ref patterns); default {' '.join(DEFAULT_REF_GLOBS)}")
    ap.add_argument("--any-ref", action="store_true",
                    help="keep every ref the globs match, not only master, rN... branches and vN... tags")
    args = ap.parse_args(argv)
    git_dir = args.git_dir
    if (git_dir / ".git").exists():
        git_dir = git_dir / ".git"
    if not (git_dir / "HEAD").is_file():
        print(f"{args.git_dir}: not a git repository (give a clone of mindspore-ai/docs)", file=sys.stderr)
        return 2
    refs = release_refs(git_dir, tuple(args.ref_glob or DEFAULT_REF_GLOBS), release_only=not args.any_ref)
    if not refs:
        print(f"no refs matching {args.ref_glob or DEFAULT_REF_GLOBS} in {git_dir}", file=sys.stderr)
        return 2
    heads = {}
    for ref in refs:
        heads[ref] = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
    samples = collect(git_dir, refs)
    for s in samples:
        classify(s)
    samples.sort(key=lambda s: (ref_order(s.places[0].ref), s.places[0].page, s.places[0].block))
    taken: set[str] = set()
    for s in samples:
        s.name = name_for(s, taken)
    out = args.out
    problem = clear_out(out)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    for kind in ("complete", "excerpt"):
        (out / kind).mkdir(parents=True, exist_ok=True)
    for s in samples:
        if s.kind != "left_out":
            (out / s.kind / s.name).write_text(s.text, encoding="utf-8")
    (out / "MANIFEST.toml").write_text(manifest(samples, refs, heads), encoding="utf-8")
    counts = {k: sum(1 for s in samples if s.kind == k) for k in ("complete", "excerpt", "left_out")}
    print(f"{len(refs)} refs, {sum(len(s.places) for s in samples)} IR blocks found, "
          f"{len(samples)} distinct: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
