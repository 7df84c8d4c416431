"""A project locked once per test module (real resolve against the local index and channel),
copied for each test, plus helpers to change its files the way people do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lockguard.lockfiles.headers import PLACEHOLDER, seal

INTENT = """\
python = "3.11"
cuda = "12.1"
driver = "535.104.05"
gpu = ["sm_80", "sm_90"]
channels = ["{channel}"]
indexes = ["{index}"]
pytorch-index = "{pytorch}"
pip = ["torch==2.1.*", "numpy", "jinja2"]
"""


def make_locked_project(root: Path, world, channel: Path, *, knowledge_only: bool = False) -> Path:
    from lockguard.cli.boundary import run

    project = root / "locked"
    project.mkdir(parents=True)
    (project / "lockguard.toml").write_text(
        INTENT.format(channel=channel.as_uri(), index=world.pypi.url, pytorch=world.pytorch.url)
    )
    args = ["resolve", "--intent", str(project / "lockguard.toml")]
    if knowledge_only:
        args.append("--conda-from-knowledge")
    code = run(args)
    assert code == 0, f"template resolve failed with {code}"
    return project


def copy_project(template: Path, target: Path) -> Path:
    shutil.copytree(template, target)
    return target


def edit(path: Path, old: str, new: str, *, reseal: bool = False) -> None:
    """Replace text in a file; `reseal` recomputes its body hash (as if a tool rewrote it)."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    text = text.replace(old, new, 1)
    if reseal:
        import re

        text = seal(
            re.sub(
                r"(lockguard-body-hash: sha256:)[0-9a-f]{64}",
                lambda m: m.group(1) + PLACEHOLDER,
                text,
            )
        )
    path.write_text(text)


def check_json(lg, project: Path, *args: str) -> tuple[int, list[str], list[dict]]:
    """`lockguard check --format json --no-cache` of the project: the exit code, the finding codes
    and the findings."""
    result = lg(
        "check",
        "--intent",
        str(project / "lockguard.toml"),
        "--format",
        "json",
        "--no-cache",
        *args,
    )
    findings = json.loads(result.stdout)["data"]["findings"]
    return result.exit_code, [f["code"] for f in findings], findings
