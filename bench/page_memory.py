"""Peak memory of parsing a 100 MB PEP 503 page (390k links, the target keeping one in twelve):
`python bench/page_memory.py REPO` with REPO the lockguard checkout to measure."""

import resource
import sys
import time

sys.path.insert(0, sys.argv[1])
from lockguard.io.index.simple_index import project_rows

rows = []
n = 0
parts = ["<!DOCTYPE html><html><body>\n"]
total = 0
while total < 100_000_000:
    name = f"pkg-1.{n}.0-cp3{n % 12}-cp3{n % 12}-manylinux_2_17_x86_64.whl"
    line = f'<a href="https://files.example/{n:08d}/{name}#sha256={"a" * 64}" data-requires-python="&gt;=3.8">{name}</a><br/>\n'
    parts.append(line)
    total += len(line)
    n += 1
parts.append("</body></html>\n")
body = "".join(parts).encode()
del parts
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.time()
keep = lambda f: "cp311" in f
r = project_rows(body, "text/html", "https://i.example/simple/pkg/", keep)
print(
    f"anchors={n} kept={len(r)} body={len(body) / 1e6:.0f}MB peak_after_build={base / 1024:.0f}MB peak={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}MB time={time.time() - t:.1f}s"
)
