"""Peak memory of parsing a 100 MB PEP 503 page (390k links, the target keeping one in twelve):
`python bench/page_memory.py REPO`, REPO being the lockguard checkout to measure."""

from __future__ import annotations

import resource
import sys
import time

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
from lockguard.io.index.simple_index import project_rows  # noqa: E402


def page(size: int = 100_000_000) -> tuple[bytes, int]:
    parts = ["<!DOCTYPE html><html><body>\n"]
    total = count = 0
    while total < size:
        name = f"pkg-1.{count}.0-cp3{count % 12}-cp3{count % 12}-manylinux_2_17_x86_64.whl"
        sha = "a" * 64
        line = (
            f'<a href="https://files.example/{count:08d}/{name}#sha256={sha}" '
            f'data-requires-python="&gt;=3.8">{name}</a><br/>\n'
        )
        parts.append(line)
        total += len(line)
        count += 1
    parts.append("</body></html>\n")
    return "".join(parts).encode(), count


def keep(filename: str) -> bool:
    return "cp311" in filename


def main() -> None:
    body, links = page()
    built = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.time()
    rows = project_rows(body, "text/html", "https://i.example/simple/pkg/", keep)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"links={links} kept={len(rows)} page={len(body) / 1e6:.0f} MB "
        f"peak after building it={built:.0f} MB, after parsing={peak:.0f} MB, "
        f"{time.time() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
