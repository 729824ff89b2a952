"""The README and the reference pages of docs/ say what the code does: every relative link leads
to a file (and a heading, where it names one), every ``msinspect COMMAND`` they show is a command of
the CLI, every repository path they name in code exists, and the exit-code table is the code's."""
from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from msinspect.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
# ``msinspect`` as a program: not inside a name (msinspect.cli, --msinspect-dumps, 'msinspect[x]').
RUN = re.compile(r"(?<![\w./'-])msinspect((?:[ \t]+\S+)+)")
TOP = ("msinspect/", "tests/", "bench/", "tools/", "grammars/", "fixtures/", "train_jobs/", "csrc/", "docs/")


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _code(text: str) -> list[str]:
    """What the page shows as code: fenced blocks, indented blocks and inline spans, one per line."""
    lines = [line for block in FENCE.findall(text) for line in block.splitlines()[1:-1]]
    prose = FENCE.sub("", text)
    previous = ""
    for line in prose.splitlines():
        if line.startswith("    ") and (not previous.strip() or previous.startswith("    ")):
            lines.append(line)
        previous = line
    lines += [span.group(2).replace("\n", " ") for span in SPAN.finditer(prose)]
    return lines


def _prose(text: str) -> str:
    """The page less its fenced blocks and inline code, where a link is a link."""
    return SPAN.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+)$", text, re.M)}


def test_the_pages_exist():
    assert (ROOT / "docs").is_dir() and len(PAGES) > 10
    assert all(p.read_text().startswith("# ") for p in PAGES), "each page starts with its title"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_leads_to_a_file(page):
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z]+:", target):          # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
            broken.append(f"{target}: no heading #{anchor} in {_name(where)}")
    assert broken == [], f"{_name(page)}: broken links"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_command_shown_is_a_command(page):
    ctx = click.Context(main)
    commands = set(main.list_commands(ctx))
    wrong = []
    for line in _code(page.read_text()):
        for match in RUN.finditer(line):
            words = [w.strip("`'\",;:()") for w in match.group(1).split() if not w.startswith("-")]
            if not words or not re.fullmatch(r"[a-z][a-z-]*", words[0]):
                continue                          # COMMAND, ..., a placeholder
            if words[0] not in commands:
                wrong.append(f"msinspect {words[0]}")
                continue
            command = main.get_command(ctx, words[0])
            if isinstance(command, click.Group) and len(words) > 1 and re.fullmatch(r"[a-z][a-z-]*", words[1]):
                if words[1] not in command.list_commands(ctx):
                    wrong.append(f"msinspect {words[0]} {words[1]}")
    assert wrong == [], f"{_name(page)} shows commands msinspect does not have (msinspect --help lists them)"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_repository_path_named_exists(page):
    missing = []
    for line in _code(page.read_text()):
        for token in re.findall(r"[\w./-]+", line):
            token = token.rstrip(".")
            if not token.startswith(TOP) or re.search(r"[A-Z]{3,}|\bx\b|\.\.\.", token):
                continue                          # placeholders: NAME.ir, MODE.toml, runs/x ...
            if not (ROOT / token).exists():
                missing.append(token)
    assert missing == [], f"{_name(page)} names paths that do not exist"


def test_the_exit_code_table_is_the_code():
    from msinspect import errors

    table = (ROOT / "docs" / "exit-codes.md").read_text()
    documented = {int(code) for code in re.findall(r"^\|\s*(\d+)\s*\|", table, re.M)}
    assert documented == {value for name, value in vars(errors).items() if name.startswith("EXIT_")}


def test_the_readme_links_every_page():
    readme = (ROOT / "README.md").read_text()
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(_prose(readme))}
    assert [p.name for p in PAGES[1:] if p.name not in linked] == []
