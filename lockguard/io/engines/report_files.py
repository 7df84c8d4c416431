"""Per-node report files: read every report named on the command line (a folder means its *.json
files), write the ones `fleet run` collects as DIR/<node>.json, write a rendered report."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from lockguard.errors import InputError
from lockguard.fleet.records import Malformed, NodeReport, node_report
from lockguard.io.project.files import write_all_atomic, write_file
from lockguard.io.read import MIB, read_regular


def read_reports(paths: list[Path]) -> tuple[list[NodeReport], list[tuple[str, str]]]:
    """(the reports, [(file, what is wrong)] for those that could not be read). One process: on
    this 2-CPU machine worker processes cost more CPU (pickling the reports back) than they save."""
    unreadable: list[tuple[str, str]] = []
    reports, bad = _read(_files(paths, unreadable))
    return reports, unreadable + bad


REPORT_LIMIT = 256 * MIB  # a node's report is about 11 kB


def _read(files: list[str]) -> tuple[list[NodeReport], list[tuple[str, str]]]:
    reports: list[NodeReport] = []
    unreadable: list[tuple[str, str]] = []
    for path in files:
        try:
            data = json.loads(read_regular(path, REPORT_LIMIT))
        except OSError as exc:
            unreadable.append((path, f"cannot be read: {exc.strerror or exc}"))
            continue
        except InputError as exc:  # not a regular file, or too large
            unreadable.append((path, f"cannot be read: {exc.message}"))
            continue
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            where = (
                f" at line {exc.lineno}, column {exc.colno}"
                if isinstance(exc, json.JSONDecodeError)
                else ""
            )
            unreadable.append((path, f"not JSON{where}: {getattr(exc, 'msg', exc)}"))
            continue
        try:
            stem = os.path.basename(path).rsplit(".", 1)[0]
            reports.append(node_report(data, file=path, default_node=stem))
        except Malformed as exc:
            unreadable.append((path, f"not a lockguard node report: {exc}"))
    return reports, unreadable


def _files(paths: list[Path], unreadable: list[tuple[str, str]]) -> list[str]:
    files: list[str] = []
    for path in paths:
        if path.is_dir():
            found = [
                os.path.join(path, name)
                for name in sorted(os.listdir(path))
                if name.endswith(".json") and not name.startswith(".")
            ]
            if not found:
                unreadable.append((str(path), "a folder with no *.json report in it"))
            files += found
        elif path.exists():
            files.append(str(path))
        else:
            unreadable.append((str(path), "no such file or folder"))
    return files


def file_name(node: str) -> str:
    """A node's name as a file name: what a file system refuses becomes '_'."""
    safe = re.sub(r"[^A-Za-z0-9._+@=-]", "_", node).lstrip(".")
    return (safe or "node") + ".json"


def write_node_files(folder: Path, records: list[dict]) -> list[Path]:
    files: dict[Path, str] = {}
    for record in records:
        path = folder / file_name(record["node"])
        stem, count = path.stem, 1
        while path in files:  # two nodes whose names differ only in refused characters
            count += 1
            path = folder / f"{stem}~{count}.json"
        files[path] = json.dumps(record, indent=2, sort_keys=True) + "\n"
    write_all_atomic(files)
    return list(files)


def write_output(path: Path, text: str) -> None:
    write_file(path, text)
