"""PEP 517 metadata builds of sdists, with one isolated build environment per set of build
requirements per run (issue 31 §2).

An sdist whose metadata no standard lets lockguard read (io/index/sdist_static.py) and no knowledge
row answers is built: `prepare_metadata_for_build_wheel` in an isolated environment holding its
build requirements. Those are often torch (megablocks, transformer-engine-torch): a 1-3 GB download
and a minute of unpacking. So the environment is made once per run for each set of build
requirements and reused by every candidate that asks the same (megablocks 0.9.0 and 0.10.0 pin
different torches, so they get two), and a torch build requirement that the stack's torch meets is
installed as the stack's torch, from the index the lock takes it from: the build then sees the torch
the lock will install (transformer-engine-torch names `transformer_engine_cu12` or `_cu13` after
`torch.version.cuda`).

Build requirements come from the intent's indexes (the same the lock reads), through pip in the
environment (`--isolated`: the user's pip configuration does not redirect it), its downloads cached
under lockguard's cache. Each phase is reported (`on_build(event, filename, detail)`): "env"
creating the environment, "install" installing requirements, "prepare" running a hook.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import os
import shutil
import sys
import tarfile
import tempfile
import threading
import venv
import warnings
import weakref
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from lockguard.errors import BuildFailed, SourceUnreachable
from lockguard.io.run import run_bounded

BUILD_TIMEOUT = 180.0  # seconds one backend hook may take
INSTALL_TIMEOUT = 1200.0  # seconds installing build requirements may take (torch: 1-3 GB)

BUILD_HINT = (
    "sdists whose build imports torch need static metadata: add a [[dependency-metadata]] entry "
    "(name, version, requires-dist) to the intent"
)

OnBuild = Callable[[str, str, str], None]  # (event, sdist file name, what happens)


def build_failed(filename: str, reason: str, *, lasting: bool = False) -> BuildFailed:
    return BuildFailed(
        f"cannot read the metadata of {filename}: its build failed ({reason})",
        filename=filename,
        hint=entry_hint(filename),
        lasting=lasting,
    )


def entry_hint(filename: str) -> str:
    """The [[dependency-metadata]] entry that answers a failed build, its name and version
    filled in from the sdist's file name (issue 31 §2)."""
    try:
        name, version = parse_sdist_filename(filename)
    except InvalidSdistFilename:
        return BUILD_HINT
    return (
        "sdists whose build imports torch need static metadata: add to the intent "
        f'[[dependency-metadata]] name = "{name}" version = "{version}" '
        'requires-dist = ["..."] (what its setup.py or pyproject.toml installs; '
        "or pin a version that has a wheel)"
    )


def _last_lines(output: Sequence[str], count: int = 3) -> str:
    """The build's last few non-empty lines, each clipped, joined (where a traceback ends)."""
    lines = [line.strip()[:200] for line in output if line.strip()][-count:]
    return " | ".join(lines)


@dataclass(frozen=True)
class BuildPreferences:
    """The torch a build environment installs when a build requirement allows it: the first of the
    platform's stack torches ("2.7.0+cu126", newest first) that the index has, from the index the
    lock takes it from. `has(version, index_url)`: whether that index has the version."""

    torches: tuple[str, ...] = ()
    pytorch_index: str = ""
    has: Callable[[str, str | None], bool] | None = None

    def index_of(self, torch: str) -> str | None:
        """Where the stack takes `torch` from: the PyTorch index's variant folder for a local
        version ("+cu126"), else None (the intent's indexes)."""
        if "+" not in torch:
            return None
        return f"{self.pytorch_index.rstrip('/')}/{torch.split('+', 1)[1]}"


def build_preferences(
    torches: Sequence[str] | None,
    pytorch_index: str,
    has: Callable[[str, str | None], bool] | None = None,
) -> BuildPreferences:
    return BuildPreferences(tuple(torches or ()), pytorch_index, has)


def offers(index, name: str) -> Callable[[str, str | None], bool]:
    """has(version, index_url): whether `index` (an io/index/client.IndexClient) lists a file of
    `name` `version` on that PyTorch index variant (None: on the intent's indexes)."""

    def has(version: str, index_url: str | None) -> bool:
        try:
            page = index.variant_page(name, index_url) if index_url else index.project(name)
        except SourceUnreachable:
            return False
        return page is not None and any(_version_of(f.filename) == version for f in page.files)

    return has


def _version_of(filename: str) -> str | None:
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[1])
        return str(parse_sdist_filename(filename)[1])
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


class _SharedEnv:
    """A venv holding build requirements: build.env.IsolatedEnv's two members, public API."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()  # installs into it run one at a time
        self.installed: set[str] = set()  # requirement texts installed so far
        self.failure: BuildFailed | None = None  # its creation or first install failed
        self.ready = False  # created and its build requirements installed

    @property
    def python_executable(self) -> str:
        folder = "Scripts" if os.name == "nt" else "bin"
        return str(self.path / folder / ("python.exe" if os.name == "nt" else "python"))

    def make_extra_environ(self) -> dict[str, str]:
        folder = "Scripts" if os.name == "nt" else "bin"
        return {"PATH": os.pathsep.join([str(self.path / folder), os.environ.get("PATH", "")])}


class BuildEnvironments:
    """The run's build environments, keyed by (build requirements, preferences); thread-safe."""

    def __init__(self, indexes: Sequence[str], pip_cache: Path | None = None) -> None:
        self.indexes = tuple(indexes)
        self.pip_cache = pip_cache
        self._root: Path | None = None  # made at the first build: most runs build nothing
        self._envs: dict[tuple, _SharedEnv] = {}
        self._guard = threading.Lock()

    def prepare_metadata(
        self,
        filename: str,
        archive: bytes,
        *,
        prefer: BuildPreferences = BuildPreferences(),  # noqa: B008 (frozen, never mutated)
        on_build: OnBuild = lambda _e, _f, _d: None,
    ) -> bytes:
        """METADATA of the wheel the sdist `archive` would build; BuildFailed if it cannot."""
        from build import BuildBackendException, BuildException, ProjectBuilder
        from pyproject_hooks import BuildBackendWarning

        # the backend's warnings (setuptools' license classifiers...) are re-raised here; a
        # resolve that reads an sdist's metadata must not print them
        warnings.filterwarnings("ignore", category=BuildBackendWarning)
        output: list[str] = []
        runner = _quiet_runner(output)
        with tempfile.TemporaryDirectory(prefix="lockguard-sdist-") as tmp:
            source = _unpack(filename, archive, Path(tmp) / "src")
            # what failed decides whether the failure lasts: the sdist's own project and backend
            # fail the same way next time; installing build requirements (the network) may not
            stage = "project"
            try:
                requires = sorted(ProjectBuilder(source, runner=runner).build_system_requires)
                env = self._environment(filename, requires, prefer, on_build)
                builder = ProjectBuilder.from_isolated_env(env, source, runner=runner)
                stage = "backend"
                on_build("prepare", filename, "running get_requires_for_build_wheel")
                more = sorted(builder.get_requires_for_build("wheel"))
                if more:
                    stage = "install"
                    self._install(env, filename, more, prefer, on_build)
                    stage = "backend"
                on_build("prepare", filename, "running prepare_metadata_for_build_wheel")
                info = Path(builder.metadata_path(Path(tmp) / "out"))
                return (info / "METADATA").read_bytes()
            except BuildFailed:
                raise
            except (BuildException, BuildBackendException, Exception) as exc:
                last = _last_lines(output)
                text = str(exc).strip()
                reason = f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"
                timed_out = any(line.startswith("timed out after") for line in output)
                raise build_failed(
                    filename,
                    reason + (f"; the build said: {last}" if last else ""),
                    lasting=stage in ("project", "backend") and not timed_out,
                ) from None

    # -- environments --------------------------------------------------------------------------

    def _environment(
        self, filename: str, requires: list[str], prefer: BuildPreferences, on_build: OnBuild
    ) -> _SharedEnv:
        constraints, indexes, notes = self._preferred(requires, prefer)
        key = (tuple(requires), tuple(constraints), tuple(indexes))
        with self._guard:
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="lockguard-build-envs-"))
                # removed when the run's fetchers are gone, or at exit
                weakref.finalize(self, shutil.rmtree, str(self._root), True)
            env = self._envs.get(key)
            if env is None:
                env = self._envs[key] = _SharedEnv(self._root / f"env-{len(self._envs)}")
        with env.lock:  # a second candidate waits for the first one's install, then reuses it
            if env.failure is not None:
                raise env.failure
            if env.ready:
                on_build("env", filename, f"reusing the build environment with {_listed(requires)}")
                return env
            on_build("env", filename, f"creating a build environment with {_listed(requires)}")
            try:
                venv.EnvBuilder(with_pip=_outer_pip() is None, symlinks=os.name != "nt").create(
                    env.path
                )
            except Exception as exc:  # OSError, or ensurepip's CalledProcessError
                env.failure = build_failed(filename, f"cannot create a build environment ({exc})")
                raise env.failure from None
            try:
                self._install_locked(env, filename, requires, prefer, on_build, notes)
            except BuildFailed as failure:
                env.failure = failure
                raise
            env.ready = True
            return env

    def _install(
        self,
        env: _SharedEnv,
        filename: str,
        requires: list[str],
        prefer: BuildPreferences,
        on_build: OnBuild,
    ) -> None:
        with env.lock:
            self._install_locked(env, filename, requires, prefer, on_build)

    def _install_locked(
        self,
        env: _SharedEnv,
        filename: str,
        requires: list[str],
        prefer: BuildPreferences,
        on_build: OnBuild,
        notes: Sequence[str] = (),
    ) -> None:
        missing = [r for r in requires if r not in env.installed]
        if not missing:
            return
        constraints, indexes, more_notes = self._preferred(missing, prefer)
        notes = list(notes) or more_notes
        said = f"installing {_listed(missing)}" + (f" ({'; '.join(notes)})" if notes else "")
        on_build("install", filename, said)
        with tempfile.TemporaryDirectory(prefix="lockguard-build-reqs-") as tmp:
            listing = Path(tmp) / "requirements.txt"
            listing.write_text("\n".join(missing) + "\n")
            outer = _outer_pip()
            pip = [*outer, "--python", env.python_executable] if outer else None
            command = [
                *(pip or [env.python_executable, "-Im", "pip"]),
                "--isolated",
                "--disable-pip-version-check",
                "install",
                "--no-input",
                "--no-warn-script-location",
                "--no-compile",
                "-r",
                str(listing),
            ]
            if self.pip_cache is not None:
                command += ["--cache-dir", str(self.pip_cache)]
            if indexes:
                command += ["--index-url", indexes[0]]
                for url in indexes[1:]:
                    command += ["--extra-index-url", url]
            if constraints:
                pinned = Path(tmp) / "constraints.txt"
                pinned.write_text("\n".join(constraints) + "\n")
                command += ["-c", str(pinned)]
            done = run_bounded(command, timeout=INSTALL_TIMEOUT, what="pip")
        if done.returncode is None or done.timed_out:
            raise build_failed(filename, f"installing {_listed(missing)}: {done.problem}")
        if done.returncode != 0:
            lines = (done.stdout + "\n" + done.stderr).strip().splitlines()
            last = " / ".join(line.strip() for line in lines[-3:] if line.strip())
            raise build_failed(filename, f"installing {_listed(missing)} failed: {last[:400]}")
        env.installed.update(missing)

    def _preferred(
        self, requires: list[str], prefer: BuildPreferences
    ) -> tuple[list[str], list[str], list[str]]:
        """(pip constraints, indexes, what to say): the stack's torch where a requirement allows
        it, from its index; else what the requirement asks, from the intent's indexes."""
        constraints: list[str] = []
        indexes = list(self.indexes)
        notes: list[str] = []
        for text in requires:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if canonicalize_name(requirement.name) != "torch" or not prefer.torches:
                continue
            chosen = self._stack_torch(requirement, prefer)
            if chosen is None:
                notes.append(f"no torch of the stack ({prefer.torches[0]}...) meets {text}")
                continue
            constraints.append(f"torch=={chosen}")
            where = prefer.index_of(chosen)
            if where and where not in indexes:
                indexes.append(where)
            notes.append(f"torch {chosen}: the stack's torch")
        return constraints, indexes, notes

    @staticmethod
    def _stack_torch(requirement: Requirement, prefer: BuildPreferences) -> str | None:
        """The first stack torch the requirement allows and its index has."""
        for torch in prefer.torches:
            try:
                allowed = requirement.specifier.contains(Version(torch), prereleases=True)
            except InvalidVersion:
                continue
            if allowed and (prefer.has is None or prefer.has(torch, prefer.index_of(torch))):
                return torch
        return None


@functools.cache
def _outer_pip() -> list[str] | None:
    """lockguard's own pip, when it can install into another environment (`--python`, pip 22.3):
    the build environment is then made without pip (0.1 s instead of ensurepip's 3 s)."""
    try:
        found = Version(importlib.metadata.version("pip")) >= Version("22.3")
    except (importlib.metadata.PackageNotFoundError, InvalidVersion):
        return None
    return [sys.executable, "-m", "pip"] if found else None


def _listed(requires: Sequence[str]) -> str:
    return ", ".join(requires) if requires else "no build requirements"


class _HookFailed(Exception):
    """A build backend hook that exited non-zero or ran past BUILD_TIMEOUT (build wraps it)."""


def _quiet_runner(output: list[str]):
    """A pyproject_hooks runner that keeps the backend's output for the error message and stops a
    hook after BUILD_TIMEOUT seconds (through io/run.py: its whole process group)."""

    def runner(cmd, cwd=None, extra_environ=None):
        done = run_bounded(
            list(cmd),
            timeout=BUILD_TIMEOUT,
            env={**os.environ, **(extra_environ or {})},
            cwd=cwd,
            what="the build backend",
        )
        output[:] = (done.stdout + "\n" + done.stderr).splitlines()
        if done.timed_out:
            output.append(f"timed out after {BUILD_TIMEOUT:.0f} s")
        if not done.ok:
            raise _HookFailed(done.problem or f"the hook exited {done.returncode}")

    return runner


def _unpack(filename: str, archive: bytes, root: Path) -> Path:
    """The sdist's project folder (its single top folder, or `root`)."""
    root.mkdir(parents=True)
    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
                zipped.extractall(root)
        else:
            with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tarred:
                tarred.extractall(root, filter="data")
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        raise build_failed(
            filename, f"the archive cannot be unpacked ({exc})", lasting=True
        ) from None
    tops = [p for p in root.iterdir() if p.is_dir()]
    return tops[0] if len(tops) == 1 else root
