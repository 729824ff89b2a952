"""Parse time and memory stay linear in the input, whatever it holds: long digit runs, bracket
runs, megabyte lines, blank-line floods, many broken nodes read leniently. Prints seconds per case
at two sizes (the ratio of the larger to the smaller should follow the ratio of sizes) and the
peak RSS. Outside CI: ``python bench/parse_linearity.py``."""
import time, resource, sys
from msinspect import parse_text, IRParseError
HEAD = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
def node(i, extra=""):
    return f"  %{i}(CNode_{i}) = PrimFunc_ReLU(%para1_x{extra})\n      : (<Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)\n"
TAIL = "  Return(%0)\n      : (<Tensor[Float32], (4)>)\n}\n\n\n"
def run(name, text, lenient=False):
    t = time.time()
    try:
        ir = parse_text(text, "x.ir", lenient=lenient); out = f"{ir.status} diags={len(ir.diagnostics)}"
    except IRParseError as e:
        out = "IRParseError " + e.message[:60]
    except Exception as e:
        out = "EXC " + type(e).__name__
    print(f"{name:38s} {len(text)/1e6:7.2f} MB {time.time()-t:7.2f} s  {out}", flush=True)
for n in (10000, 40000):
    run(f"digits run {n}", HEAD + node(0, ", " + "1" * n + "x") + TAIL)
    run(f"digits number {n}", HEAD + node(0, ", " + "1" * n) + TAIL)
    run(f"spaces in key line {n}", "# IR entry: @g\n# Attrs:\nkey" + " " * n + "x\n")
    run(f"brackets {n}", HEAD + node(0, ", " + "(" * n) + TAIL)
    run(f"abstract brackets {n}", HEAD + "  %0(CNode_0) = PrimFunc_ReLU(%para1_x)\n      : (<" + "(" * n + ">) -> ()\n" + TAIL)
for mb in (1, 4):
    run(f"one line {mb} MB of args", HEAD + node(0, ", %para1_x" * (mb * 100000)) + TAIL)
    run(f"one comment line {mb} MB", HEAD + node(0) + "      # " + "x" * (mb << 20) + "\n" + TAIL)
for k in (400, 1600):
    broken = HEAD + "".join(node(i, ", ?") if i % 2 else node(i) for i in range(2 * k)) + TAIL
    run(f"lenient {k} broken nodes", broken, lenient=True)
run("blank lines 64 MiB", HEAD + node(0) + "\n" * (64 << 20) + TAIL)
print("peak RSS MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
