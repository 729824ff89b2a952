"""Does a parser change give the same models? Fingerprint the parsed model of every dump under the
given folders (strict and lenient: the model, or the error as the user sees it) with one
checkout's parser, then compare two such fingerprint files.

Usage (run ``dump`` once with each checkout first on the path, e.g. ``git archive main msinspect
grammars | tar -x -C /tmp/base`` for the one before a change):
    PYTHONPATH=/tmp/base python bench/parse_identity.py dump before.json fixtures FULL_ZOO_DIR --sample 40
    PYTHONPATH=$PWD     python bench/parse_identity.py dump after.json  fixtures FULL_ZOO_DIR --sample 40
    python bench/parse_identity.py compare before.json after.json

``--sample N`` keeps, of each folder given after the first, N files chosen by the hash of their
path (the same N in every run), smallest first up to ``--max-mb`` of text per folder.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
from pathlib import Path


def fingerprint(path: Path, lenient: bool) -> str:
    from msinspect.errors import IRParseError
    from msinspect.parser import parse_text
    from msinspect.model import canonical

    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8", "replace")
    try:
        ir = parse_text(text, path.name, lenient=lenient)
    except IRParseError as err:
        return "error: " + str(err)
    return hashlib.sha256(repr(canonical(ir)).encode()).hexdigest()


def files(folders: list[Path], sample: int, max_mb: float) -> list[Path]:
    out = []
    for i, folder in enumerate(folders):
        if folder.is_file():
            out.append(folder)
            continue
        found = sorted(p for p in folder.rglob("*") if p.name.endswith((".ir", ".ir.gz")) and p.is_file())
        if i and sample:
            found.sort(key=lambda p: hashlib.sha256(str(p).encode()).hexdigest())
            found = sorted(found[:sample * 3], key=lambda p: p.stat().st_size)
            kept, total = [], 0
            for p in found:
                size = p.stat().st_size * (8 if p.name.endswith(".gz") else 1)
                if len(kept) < sample and total + size <= max_mb * 1e6:
                    kept.append(p)
                    total += size
            found = kept
        out += found
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("folders", nargs="+", type=Path, help="folders (or single files)")
    d.add_argument("--sample", type=int, default=0)
    d.add_argument("--max-mb", type=float, default=150)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        os.environ["MSINSPECT_NO_CACHE"] = "1"
        result = {}
        for path in files(args.folders, args.sample, args.max_mb):
            result[str(path)] = [fingerprint(path, False), fingerprint(path, True)]
            print(path, file=sys.stderr)
        args.out.write_text(json.dumps(result, indent=1))
        print(f"{len(result)} files")
        return
    a, b = json.loads(args.a.read_text()), json.loads(args.b.read_text())
    differ = [k for k in a if a[k] != b.get(k)]
    missing = set(a) ^ set(b)
    for k in differ:
        print("DIFFERS:", k, a[k], b.get(k))
    print(f"{len(a)} files compared, {len(differ)} differ, {len(missing)} in one only")
    sys.exit(1 if differ or missing else 0)


if __name__ == "__main__":
    main()
