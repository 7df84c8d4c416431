"""Wiring for `lockguard resolve`: build the I/O adapters, run the pure resolution, render files.

This is the one place where the index client, the metadata fetcher, the cache, the conda solver
and the file writers meet; `lockguard.resolve` itself stays free of I/O.
"""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from lockguard.app.relock import Relock
from lockguard.app.reporting import Messages, ResolveWatchFactory, SilentWatch
from lockguard.errors import InputError
from lockguard.io.index.cache import PAGE_TTL_SECONDS, Cache
from lockguard.io.index.client import IndexClient
from lockguard.io.index.conda import RattlerSolver
from lockguard.io.index.early import fetched
from lockguard.io.index.failed_builds import FailedBuilds
from lockguard.io.index.http import HttpClient
from lockguard.io.index.metadata import MetadataFetcher, synthesize_metadata
from lockguard.io.index.pip_source import IndexPackageSource
from lockguard.io.index.resolve_memo import Remembered, ResolveMemo, memo_key
from lockguard.io.knowledge_files import load_knowledge
from lockguard.io.machine.nvml import detect_machine
from lockguard.io.project.files import remove_leftovers, write_all_atomic
from lockguard.io.project.intent_file import source_of
from lockguard.io.project.lock_set import LockSet
from lockguard.io.project.project_files import read_lock_text
from lockguard.io.project.written import remember
from lockguard.io.read import INTENT_LIMIT, read_text
from lockguard.lockfiles import conda_lock, environment_yml, pylock, requirements_lock
from lockguard.model.intent import Intent
from lockguard.model.intent_parse import PYPROJECT
from lockguard.model.lock_paths import lock_file, lock_paths
from lockguard.model.toml_lines import TomlLines
from lockguard.model.wording import counted
from lockguard.resolve.candidates import CandidateFilter
from lockguard.resolve.gate import refuse_what_check_rejects
from lockguard.resolve.orchestrate import ResolveOptions, resolve_lock
from lockguard.resolve.speculate import Speculator
from lockguard.resolve.tags import coarse_filename_filter

if TYPE_CHECKING:  # the lock's model is imported by the resolution, not by a memo hit
    from lockguard.model.lock import Lock
    from lockguard.model.upgrades import UpgradeRequest


class Resolved:
    """What a resolve produced: the lock files' text by path, the platforms resolved, and the
    --json summary without its "written" list. `remembered`: it came from the resolution memo
    (lock files that passed the check gate for these very inputs when they were memoized)."""

    def __init__(self, outputs: dict[Path, str], platforms: tuple[str, ...], summary: dict,
                 remembered: bool = False) -> None:
        self.outputs = outputs
        self.platforms = platforms
        self.summary = summary
        self.remembered = remembered


class _Recorder:
    """The messages, with the info lines and warnings of a resolve kept (in order) for its memo."""

    def __init__(self, ui: Messages) -> None:
        self._ui = ui
        self.messages: list[tuple[str, str]] = []
        self.warned_while_resolving = False
        self.rendering = False

    def info(self, message: str) -> None:
        self.messages.append(("info", message))
        self._ui.info(message)

    def warn(self, message: str) -> None:
        self.messages.append(("warn", message))
        self.warned_while_resolving = self.warned_while_resolving or not self.rendering
        self._ui.warn(message)

    def __getattr__(self, name: str):
        return getattr(self._ui, name)


class ResolveSession:
    def __init__(self, intent: Intent, ui: Messages, *, offline: bool = False, refresh: bool = False,
                 conda_from_knowledge: bool = False, platforms: tuple[str, ...] = (),
                 upgrade: UpgradeRequest | None = None, watch: ResolveWatchFactory | None = None) -> None:
        self.intent = intent
        self.relock = Relock(intent, upgrade)  # the existing lock: preferences, memo key, change report
        self.ui = ui
        self.offline = offline
        self.refresh = refresh
        self.conda_from_knowledge = conda_from_knowledge
        self.platforms = platforms
        self.watch = watch or (lambda _counts: SilentWatch())  # the cli's progress line, or nothing
        self.http: HttpClient | None = None
        self.sources: list[IndexPackageSource] = []
        self.index_clients: list[IndexClient] = []  # each platform's IndexClient: the pages the resolve read
        self.conda_solved = False  # rattler solved the conda side (its repodata is not memoized)
        self._machine_facts: tuple | None = None
        self._memo: ResolveMemo | None = None
        self._memo_after: ResolveMemo | None = None  # the same entry under the key of the lock it writes (app/relock.py)
        self._to_remember: Remembered | None = None  # what `remember` stores once the gate has passed it

    # -- resolution, or the memo of an identical one -------------------------------------------

    def resolve(self) -> Resolved:
        """The lock files for the intent: from the resolution memo when every input is what it
        was (io/index/resolve_memo.py says what that takes), else resolved and rendered."""
        root = self._root()
        machine = self._machine()
        self.relock.refuse_unknown_names()
        options = {"conda_from_knowledge": self.conda_from_knowledge, "platforms": self.platforms,
                   "constraints": os.environ.get("LOCKGUARD_CONSTRAINTS", "")}
        machine_repr = repr(machine) if machine is not None else None
        memo = self._memo = ResolveMemo(Cache(), memo_key(intent_repr=repr(self.intent), machine_repr=machine_repr,
                                                          options={**options, **self.relock.memo_options()}),
                                        ttl=PAGE_TTL_SECONDS, offline=self.offline)
        if not self.refresh:
            allowed = {relative for relative, _kind, _platform in lock_paths(self.intent)}
            remembered = memo.lookup(allowed)
            if remembered is not None:
                for kind, text in remembered.messages:
                    (self.ui.info if kind == "info" else self.ui.warn)(text)
                self.ui.debug(f"resolution memo: the {len(remembered.pages)} index pages this intent's last "
                              "resolve read are unchanged and fresh; its lock files are used as they are")
                return Resolved({root / relative: text for relative, text in remembered.outputs.items()},
                                tuple(remembered.platforms), remembered.summary, remembered=True)
        ui, recorder = self.ui, _Recorder(self.ui)
        self.ui = recorder
        try:
            lock = self.run()
            recorder.rendering = True
            outputs = self.render(lock)
        finally:
            self.ui = ui
        resolved = Resolved(outputs, tuple(p.target.platform for p in lock.platforms), self._summary(lock))
        pages = {url: sha for client in self.index_clients for url, sha in client.pages_used.items()}
        hashed = {url: sha for url, sha in pages.items() if sha is not None}  # a page without one: no memo
        if pages and len(hashed) == len(pages) and not recorder.warned_while_resolving and not self.conda_solved:
            entry = self._to_remember = Remembered(
                {str(path.relative_to(root)): text for path, text in outputs.items()}, list(resolved.platforms),
                resolved.summary, recorder.messages, hashed)
            after = self.relock.memo_options_after(entry.outputs)
            self._memo_after = ResolveMemo(Cache(), memo_key(intent_repr=repr(self.intent), options={
                **options, **after}, machine_repr=machine_repr), ttl=PAGE_TTL_SECONDS, offline=self.offline)
        return resolved

    def remember(self) -> None:
        """Keep the resolution just made for the next resolve of the same inputs; called once
        its lock files passed the check gate (a memo hit skips the gate: same inputs, same files)."""
        if self._to_remember is not None and self._memo is not None:
            self._memo.store(self._to_remember)
            if self._memo_after is not None and self._memo_after.key != self._memo.key:
                entry = self._to_remember
                self._memo_after.store(Remembered(entry.outputs, entry.platforms, entry.summary,
                                                  [m for m in entry.messages if m[1] not in self.relock.said],
                                                  entry.pages))
            self._to_remember = None

    def _root(self) -> Path:
        return self.intent.source.root if self.intent.source else Path.cwd()

    # -- resolution ------------------------------------------------------------------------------

    def run(self) -> Lock:
        knowledge = load_knowledge()
        machine = self._machine()
        cache = Cache()
        http = self.http = HttpClient()
        overrides = self._metadata_overrides()
        known = self._known_metadata(knowledge)
        fetchers: list = []
        progress = self.watch(lambda: (http.requests, sum(sum(f.counts.copy().values()) for f in list(fetchers))))

        def make_source(target, torch_versions):
            keep, keep_key = coarse_filename_filter(target)
            index = IndexClient(http, cache, self.intent.indexes, offline=self.offline, refresh=self.refresh, keep_file=keep, keep_key=keep_key)
            self.index_clients.append(index)
            fetcher = MetadataFetcher(http, cache, offline=self.offline, overrides=overrides, warn=self.ui.warn,
                                      failed_builds=FailedBuilds(refresh=self.refresh), on_build=progress.build,
                                      known=known)
            fetchers.append(fetcher)
            speculator = Speculator(target, CandidateFilter(target, self.intent.exclude_newer), torch_versions,
                                    preferred=self.relock.speculation(target.platform))
            source = IndexPackageSource(index, fetcher, speculator=speculator)
            self.sources.append(source)
            return source

        conda = None
        if not (self.conda_from_knowledge or self.intent.conda_from_knowledge or self.intent.pip_only):
            conda = RattlerSolver(cache.root / "conda", offline=self.offline)
            self.conda_solved = True
        for note in self.relock.prior().notes:
            self.ui.warn(note)
        options = ResolveOptions(conda_from_knowledge=self.conda_from_knowledge, platforms=self.platforms,
                                 progress=progress.phase, warn=self.ui.warn, note=self.ui.info,
                                 detail=self.ui.debug, preferences=self.relock.preferences, locked=self.relock.locked,
                                 on_notes=self.relock.notes.append)
        # the collector's full passes walk every page row and metadata object kept so far, again
        # and again (a tenth of a cold resolve's CPU); what a resolve allocates is freed by
        # reference counting, and the collector runs once it is done
        collecting = gc.isenabled()
        gc.disable()
        try:
            with progress:
                lock = resolve_lock(self.intent, knowledge, machine, make_source, conda, options)
        finally:
            if collecting:
                gc.enable()
            self.ui.done()
            for source in self.sources:
                source.close()
            http.close()
            if http.in_flight:  # never closed under them (io/index/http.py says why)
                self.ui.debug(f"{http.in_flight} prefetches still in flight: their connections close "
                              "when they end")
            early_bytes, early_requests = fetched()
            self.ui.debug(f"fetched {(http.bytes_fetched + early_bytes) / 1e6:.1f} MB in "
                          f"{counted(http.requests + early_requests, 'request')}")
        for platform in lock.platforms:
            torch = platform.pip.pin("torch")
            conda_note = ("conda: " + (f"{counted(len(platform.conda.records), 'record')}" if platform.conda.solved
                                       else f"{len(platform.conda.specs)} specs from knowledge (not solved)")
                          if platform.conda else "pip only")
            torch_note = f", torch {torch.version} ({platform.stack.variant})" if torch else ""
            self.ui.info(f"{platform.target.platform}: {len(platform.pip.pins)} pip packages{torch_note}; {conda_note}")
        if conda is not None:
            self.relock.missing_conda = list(conda.missing_locked)
        self.relock.say(self.ui.warn, self.ui.info)
        return lock

    def _machine(self):
        """The machine's facts, detected once, and only for `cuda = "auto"` or `gpu = "auto"`."""
        if self.intent.cuda.mode != "auto" and not self.intent.gpu_auto:
            return None
        if self._machine_facts is None:
            self._machine_facts = (detect_machine(),)
        return self._machine_facts[0]

    def _metadata_overrides(self) -> dict[tuple[str, str], bytes]:
        return {
            (d.name, d.version): synthesize_metadata(d.name, d.version, d.requires_dist, d.requires_python)
            for d in self.intent.dependency_metadata
        }

    def _known_metadata(self, knowledge):
        """(name, version) -> the core metadata constraints/sdist_metadata.toml gives the sdist of
        that version, or None; said once per version with -v. The intent's own
        [[dependency-metadata]] is asked first (MetadataFetcher), so it wins."""
        table = knowledge.sdist_metadata
        said: set[tuple[str, str]] = set()
        guard = threading.Lock()  # fetches run in worker threads

        def known(name: str, version: str) -> bytes | None:
            row = table.row_for(name, version)
            if row is None:
                return None
            with guard:
                first = (row.name, version) not in said
                said.add((row.name, version))
            if first:
                self.ui.debug(f"metadata of {row.name} {version} from lockguard's knowledge ({row.origin})")
            return synthesize_metadata(row.name, version, row.requires_dist, row.requires_python)

        return known

    # -- files -----------------------------------------------------------------------------------

    def render(self, lock: Lock) -> dict[Path, str]:
        intent = self.intent
        root = self._root()
        intent_name = intent.source.path.name if intent.source else "lockguard.toml"
        files: dict[Path, str] = {}  # file names follow the intent, also for a --platform subset
        for platform in lock.platforms:
            name = platform.target.platform
            conda_state = None
            if platform.conda is not None:
                conda_state = "solved" if platform.conda.solved else "knowledge-only (not solved)"
            requirements = root / lock_file(intent, "requirements", name)
            files[requirements] = requirements_lock.render(
                platform.pip, intent_hash=intent.hash, intent_name=intent_name, python=str(intent.python),
                index_urls=platform.index_urls, conda_solved=conda_state)
            if not intent.pip_only:
                environment = root / lock_file(intent, "environment", name)
                files[environment] = environment_yml.render(platform, intent_hash=intent.hash,
                                                            intent_name=intent_name, env_name=intent.name)
            if intent.outputs.pylock:  # opt-in fourth view (PEP 751)
                relative = lock_file(intent, "pylock", name)
                files[root / relative] = pylock.render(platform, intent_hash=intent.hash, intent_name=intent_name,
                                                       python=str(intent.python), filename=Path(relative).name)
        if not intent.pip_only:
            if len(lock.platforms) == len(intent.platforms):
                files[root / lock_file(intent, "conda-lock")] = conda_lock.render(lock, intent_name=intent_name)
            else:  # conda-lock.yml holds every platform: a subset would drop the others
                self.ui.warn(f"--platform resolves a subset: {intent.outputs.conda_lock} (all platforms) is not "
                             "rewritten; resolve without --platform to update it")
        return files

    def refuse_what_check_rejects(self, platforms: tuple[str, ...], outputs: dict[Path, str]) -> None:
        """resolve never writes (or passes --check with) a lock that `lockguard check` rejects."""
        root = self._root()
        files = [(relative, kind, platform, outputs[root / relative])
                 for relative, kind, platform in lock_paths(self.intent) if root / relative in outputs]
        refuse_what_check_rejects(self.intent, load_knowledge(), files, platforms)

    def stale(self, outputs: dict[Path, str]) -> list[Path]:
        out = []
        for path, text in outputs.items():
            try:
                current = read_lock_text(path)
            except InputError:
                current = None  # not a readable lock file: certainly not what resolve would write
            if current != text:
                out.append(path)
        return out

    def lock_set(self, *, exclusive: bool = True, wait: bool = True):
        """The kernel lock on the project's lock set (io/project/lock_set.py), for the command's
        whole run: exclusive to write it, shared to compare with it (`--check`)."""
        return LockSet(self._root(), exclusive=exclusive, command="resolve", wait=wait, on_wait=self.ui.info,
                       warn=self.ui.warn)

    def write(self, outputs: dict[Path, str]) -> list[Path]:
        """Write the lock files whose bytes differ from what is on disk (a file already holding
        exactly these bytes is left alone: rewriting it would cost an fsync and change nothing).
        Temporary files a killed earlier write left next to them are removed first (the lock set
        is held: no other run is writing them)."""
        for leftover in remove_leftovers(outputs):
            self.ui.info(f"removed {leftover}, left by an interrupted write")
        changed = set(self.stale(outputs))
        write_all_atomic({p: t for p, t in outputs.items() if p in changed},
                         root=self.intent.source.root if self.intent.source else None)
        remember(outputs.values())  # lets `check` name the entries of a later hand edit (LG102)
        for path in outputs:
            self.ui.info(f"wrote {path}" if path in changed else f"unchanged: {path}")
        return [p for p in outputs if p in changed]

    @staticmethod
    def summary(resolved: Resolved, written: list[Path]) -> dict:
        return {"written": [str(p) for p in written], **resolved.summary}

    def _summary(self, lock: Lock) -> dict:
        """The --json summary of a resolution (without "written"); JSON types only, as the memo
        keeps it."""
        return {
            "intent_hash": self.intent.hash,
            "conda_solved": lock.conda_solved if not self.intent.pip_only else None,
            "platforms": {
                p.target.platform: {
                    "pip": {pin.name: pin.version for pin in p.pip.pins},
                    "conda": ({r.name: f"{r.version}={r.build}" for r in p.conda.records} if p.conda and p.conda.solved
                              else list(p.conda.specs) if p.conda else None),
                    "cuda": str(p.stack.cuda) if p.stack.cuda else None,
                    "torch_variant": p.stack.variant,
                }
                for p in lock.platforms
            },
        }


def at_its_line(exc, intent: Intent):
    """The unknown project's requirement, at its line of the intent, with the pages that said so."""
    path = source_of(intent).path
    element = next((r for r in intent.pip if canonicalize_name(_name_of(r)) == exc.name), None)
    base = ("tool", "lockguard") if path.name == PYPROJECT else ()
    line = TomlLines(read_text(path, what="intent file", limit=INTENT_LIMIT), base).line_of("pip", element=element)
    pages = ", ".join(f"{index}/{exc.name}/" for index in intent.indexes)
    where = f"{path}:{line}" if line else str(path)
    return InputError(f"{where}: pip: no index has a project named {exc.name} ({pages}: not found)",
                      file=str(path), line=line, key="pip", hint=exc.hint)


def _name_of(requirement: str) -> str:
    return Requirement(requirement).name
