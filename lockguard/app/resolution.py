"""The cold half of `lockguard resolve`: the index client, the metadata fetcher, the conda solver
and the pure resolution meet here, and the lock files are rendered. app/resolve_session.py loads
this module only when the resolution memo has no answer, so a warm resolve (a memo hit) never
imports the resolver, httpx or the lock file writers."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from pathlib import Path

from packaging.version import Version

from lockguard.app.relock import Relock
from lockguard.app.reporting import Messages, ResolveWatchFactory
from lockguard.check.gate import check_findings
from lockguard.io.index.build_env import BuildEnvironments, build_preferences, offers
from lockguard.io.index.cache import Cache
from lockguard.io.index.client import IndexClient
from lockguard.io.index.conda import RattlerSolver
from lockguard.io.index.early import fetched
from lockguard.io.index.failed_builds import FailedBuilds
from lockguard.io.index.http import HttpClient
from lockguard.io.index.metadata import MetadataFetcher, synthesize_metadata
from lockguard.io.index.pip_source import IndexPackageSource
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.knowledge.fingerprint import knowledge_fingerprint
from lockguard.knowledge.project_names import project_names
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.formats import FORMATS, RenderRequest
from lockguard.lockfiles.headers import certify
from lockguard.model.conflict import Conflict, Unsatisfiable
from lockguard.model.intent import Intent
from lockguard.model.lock import Lock
from lockguard.model.lock_paths import lock_file, lock_paths
from lockguard.model.names import close_names
from lockguard.model.target import MachineFacts
from lockguard.model.wording import counted
from lockguard.resolve.candidates import CandidateFilter
from lockguard.resolve.orchestrate import ResolveOptions, resolve_lock
from lockguard.resolve.preferences import Preferences, preferences_for, unmet_adoptions
from lockguard.resolve.speculate import Speculator
from lockguard.resolve.tags import coarse_filename_filter


class Resolution:
    """One resolution of the intent: run against the indexes (and rattler, unless the conda side
    is pinned from the knowledge), then rendered into the lock files' text."""

    def __init__(
        self,
        intent: Intent,
        ui: Messages,
        relock: Relock,
        *,
        root: Path,
        machine: MachineFacts | None,
        offline: bool,
        refresh: bool,
        conda_from_knowledge: bool,
        platforms: tuple[str, ...],
        watch: ResolveWatchFactory,
    ) -> None:
        self.intent = intent
        self.ui = ui
        self.relock = relock
        self.root = root
        self.machine = machine
        self.offline = offline
        self.refresh = refresh
        self.conda_from_knowledge = conda_from_knowledge
        self.platforms = platforms
        self.watch = watch
        self.sources: list[IndexPackageSource] = []
        self.index_clients: list[
            IndexClient
        ] = []  # each platform's IndexClient: the pages the resolve read
        self.conda_solved = False  # rattler solved the conda side (its repodata is not memoized)
        self._preferences: dict[str, Preferences | None] = {}

    # -- resolution ------------------------------------------------------------------------------

    def run(self) -> Lock:
        knowledge = load_knowledge()
        machine = self.machine
        cache = Cache()
        http = HttpClient()
        overrides = self._metadata_overrides()
        known = self._known_metadata(knowledge)
        fetchers: list = []
        # one build environment per set of build requirements for the whole run (all platforms)
        builds = BuildEnvironments(self.intent.indexes, pip_cache=cache.root / "pip")
        progress = self.watch(
            lambda: (http.requests, sum(sum(f.counts.copy().values()) for f in list(fetchers)))
        )

        def make_source(target, torch_versions):
            keep, keep_key = coarse_filename_filter(target)
            index = IndexClient(
                http,
                cache,
                self.intent.indexes,
                offline=self.offline,
                refresh=self.refresh,
                keep_file=keep,
                keep_key=keep_key,
            )
            self.index_clients.append(index)
            fetcher = MetadataFetcher(
                http,
                cache,
                offline=self.offline,
                overrides=overrides,
                warn=self.ui.warn,
                failed_builds=FailedBuilds(refresh=self.refresh),
                on_build=progress.build,
                known=known,
                builds=builds,
                build_preferences=build_preferences(
                    torch_versions, self.intent.pytorch_index, has=offers(index, "torch")
                ),
            )
            fetchers.append(fetcher)
            speculator = Speculator(
                target,
                CandidateFilter.of(target, self.intent),
                torch_versions,
                preferred=self.speculation(target.platform),
            )
            source = IndexPackageSource(index, fetcher, speculator=speculator)
            self.sources.append(source)
            return source

        conda = None
        if not (
            self.conda_from_knowledge or self.intent.conda_from_knowledge or self.intent.pip_only
        ):
            conda = RattlerSolver(cache.root / "conda", offline=self.offline)
            self.conda_solved = True
        for note in self.relock.prior().notes:
            self.ui.warn(note)
        options = ResolveOptions(
            conda_from_knowledge=self.conda_from_knowledge,
            platforms=self.platforms,
            progress=progress.phase,
            warn=self.ui.warn,
            note=self.ui.info,
            detail=self.ui.debug,
            verbose=bool(getattr(self.ui, "verbose", 0)),
            preferences=self.preferences,
            locked=self.relock.locked,
            on_notes=self.relock.notes.append,
        )
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
                self.ui.debug(
                    f"{http.in_flight} prefetches still in flight: their connections close "
                    "when they end"
                )
            early_bytes, early_requests = fetched()
            self.ui.debug(
                f"fetched {(http.bytes_fetched + early_bytes) / 1e6:.1f} MB in "
                f"{counted(http.requests + early_requests, 'request')}"
            )
        self._refuse_unmet_adoptions(lock)
        for platform in lock.platforms:
            torch = platform.pip.pin("torch")
            conda_note = (
                "conda: "
                + (
                    f"{counted(len(platform.conda.records), 'record')}"
                    if platform.conda.solved
                    else f"{len(platform.conda.specs)} specs from knowledge (not solved)"
                )
                if platform.conda
                else "pip only"
            )
            torch_note = f", torch {torch.version} ({platform.stack.variant})" if torch else ""
            self.ui.info(
                f"{platform.target.platform}: {counted(len(platform.pip.pins), 'pip package')}"
                f"{torch_note}; "
                f"{conda_note}"
            )
        if conda is not None:
            self.relock.missing_conda = list(conda.missing_locked)
        self.relock.say(self.ui.warn, self.ui.info)
        return lock

    def names_near(self, name: str) -> list[str]:
        """Known project names close to `name`, which no index has: from the pages this run
        read, the indexes' root listings already in the cache, and the knowledge tables."""
        known = set(project_names(load_knowledge()))
        for client in self.index_clients:
            known |= client.names_known()
        return close_names(name, known)

    def preferences(self, platform: str) -> Preferences | None:
        """What the existing lock (and the upgrade asked) makes the resolver prefer on
        `platform`."""
        if platform not in self._preferences:
            locked = self.relock.locked(platform)
            # hand edits --accept-edits adopts: demanded as --upgrade-package NAME==VERSION is
            adopted = self.relock.prior().adopted.get(platform, ())
            # no lock, no upgrade asked, no edit adopted: nothing to prefer, nothing to say (a
            # resolve from scratch)
            shared = self.relock.shared.demanded
            nothing = (
                locked is None and not self.relock.upgrade.packages and not adopted and not shared
            )
            self._preferences[platform] = (
                None if nothing else preferences_for(locked, self.relock.upgrade, adopted, shared)
            )
        return self._preferences[platform]

    def _refuse_unmet_adoptions(self, lock: Lock) -> None:
        """--accept-edits adopts an edit or fails (exit 3): a resolution that met the edited
        version only by dropping the package is not the lock the edit asked for."""
        for platform in lock.platforms:
            preferences = self._preferences.get(platform.target.platform)
            if preferences is None:
                continue
            pins = {pin.name: pin.version for pin in platform.pip.pins}
            unmet = unmet_adoptions(preferences, pins)
            if unmet:
                facts = [f"the hand edit {n}=={v} in {f} (--accept-edits)" for n, v, f in unmet]
                raise Unsatisfiable(
                    f"{platform.target.platform}: {'; '.join(facts)} cannot be adopted: no "
                    f"resolution keeps {', '.join(n for n, _v, _f in unmet)} at that version (the "
                    "one found drops it)",
                    conflicts=[Conflict(fact, "hand edit") for fact in facts],
                    hint="`lockguard resolve` without --accept-edits puts back the pins lockguard "
                    "wrote; a version the intent needs goes in its pip list",
                )

    def speculation(self, platform: str) -> dict[str, Version]:
        preferences = self.preferences(platform)
        return dict(preferences.pip) if preferences else {}

    def _metadata_overrides(self) -> dict[tuple[str, str], bytes]:
        return {
            (d.name, d.version): synthesize_metadata(
                d.name, d.version, d.requires_dist, d.requires_python
            )
            for d in self.intent.dependency_metadata
        }

    def _known_metadata(self, knowledge: Knowledge) -> Callable[[str, str], bytes | None]:
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
                self.ui.debug(
                    f"metadata of {row.name} {version} from lockguard's knowledge ({row.origin})"
                )
            return synthesize_metadata(row.name, version, row.requires_dist, row.requires_python)

        return known

    # -- files -----------------------------------------------------------------------------------

    def render(self, lock: Lock) -> dict[Path, str]:
        intent = self.intent
        root = self.root
        intent_name = intent.source.path.name if intent.source else "lockguard.toml"
        files: dict[Path, str] = {}  # file names follow the intent, also for a --platform subset
        wanted = [f for f in FORMATS if f.wanted(intent)]
        for platform in lock.platforms:
            for form in wanted:
                if form.per_platform:
                    relative = lock_file(intent, form.kind, platform.target.platform)
                    files[root / relative] = form.render(
                        RenderRequest(
                            lock=lock,
                            platform=platform,
                            intent=intent,
                            intent_name=intent_name,
                            relative=relative,
                            held_back=self.relock.shared.held_back,
                        )
                    )
        for form in wanted:
            if form.per_platform:
                continue
            relative = lock_file(intent, form.kind)
            if len(lock.platforms) == len(intent.platforms):
                files[root / relative] = form.render(
                    RenderRequest(
                        lock=lock,
                        platform=None,
                        intent=intent,
                        intent_name=intent_name,
                        relative=relative,
                    )
                )
            else:  # a file of every platform: a subset would drop the others
                self.ui.warn(
                    f"--platform resolves a subset: {relative} (all platforms) "
                    "is not rewritten; resolve without --platform to update it"
                )
        return files

    def summary(self, lock: Lock) -> dict:
        """The --json summary of a resolution (without "written"); JSON types only, as the memo
        keeps it."""
        return {
            "intent_hash": self.intent.hash,
            "conda_solved": lock.conda_solved if not self.intent.pip_only else None,
            "platforms": {
                p.target.platform: {
                    "pip": {pin.name: pin.version for pin in p.pip.pins},
                    "conda": (
                        {r.name: f"{r.version}={r.build}" for r in p.conda.records}
                        if p.conda and p.conda.solved
                        else list(p.conda.specs)
                        if p.conda
                        else None
                    ),
                    "cuda": str(p.stack.cuda) if p.stack.cuda else None,
                    "torch_variant": p.stack.variant,
                }
                for p in lock.platforms
            },
        }


def certified(
    intent: Intent, root: Path, platforms: tuple[str, ...], outputs: dict[Path, str]
) -> tuple[dict[Path, str], list]:
    """The lock files with their proof (lockfiles/headers.py: the knowledge fingerprint, and the
    lock set's digest when check's rules find nothing in them), and what those rules found (an
    error among them is a refusal: `refuse_what_check_rejects`)."""
    files = [
        (relative, kind, platform, outputs[root / relative])
        for relative, kind, platform in lock_paths(intent)
        if root / relative in outputs
    ]
    findings = check_findings(intent, load_knowledge(), files, platforms)
    texts = {relative: text for relative, _kind, _platform, text in files}
    stamped = certify(texts, knowledge_fingerprint(), clean=not findings)
    relatives = {root / relative: relative for relative in texts}
    return {
        path: stamped[relatives[path]] if path in relatives else text
        for path, text in outputs.items()
    }, findings
