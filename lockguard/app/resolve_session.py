"""Wiring for `lockguard resolve`: build the I/O adapters, run the pure resolution, render files.

This is the one place where the index client, the metadata fetcher, the cache, the conda solver
and the file writers meet; `lockguard.resolve` itself stays free of I/O.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lockguard import interrupts
from lockguard.app.project import load_project_intent
from lockguard.app.relock import Relock
from lockguard.app.reporting import Messages, ResolveWatchFactory, SilentWatch
from lockguard.app.resolve_outcome import (
    Resolved,
    ResolveOutcome,
    at_its_line,
    at_requirement_line,
)
from lockguard.errors import InputError, UnknownProject
from lockguard.io.index.cache import PAGE_TTL_SECONDS, Cache
from lockguard.io.index.resolve_memo import Remembered, ResolveMemo, memo_key
from lockguard.io.project.files import remove_leftovers, write_all_atomic
from lockguard.io.project.lock_set import LockSet
from lockguard.io.project.project_paths import refuse_unsafe_files
from lockguard.io.project.written import remember
from lockguard.io.read import read_lock_text
from lockguard.lockfiles.headers import is_sealed_intact, without_proof
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.intent import Intent
from lockguard.model.lock_paths import lock_paths
from lockguard.model.shared_pins import SharedPins
from lockguard.model.upgrades import upgrade_request

# the resolution and the lock's model are imported by a resolution, not by a memo hit
if TYPE_CHECKING:
    from lockguard.app.resolution import Resolution
    from lockguard.model.lock import Lock
    from lockguard.model.upgrades import UpgradeRequest


def resolve(
    ui: Messages,
    *,
    intent_path: Path | None = None,
    platforms: tuple[str, ...] = (),
    offline: bool = False,
    refresh: bool = False,
    check_only: bool = False,
    upgrade: bool = False,
    upgrade_packages: tuple[str, ...] = (),
    accept_edits: bool = False,
    conda_from_knowledge: bool = False,
    wait: bool = True,
    watch: ResolveWatchFactory | None = None,
    profiles: tuple[str, ...] = (),
) -> ResolveOutcome:
    """`lockguard resolve`'s sequence, its options as the command line gives them: the intent
    read, the lock set held (exclusive to write it, shared for `check_only`; `wait=False` exits 2
    while another run holds it) and its files refused where unsafe, the resolution (or its memo),
    the check gate, then the lock files written or, for `check_only`, compared. `watch`: the
    progress line's factory. The caller has started the prefetch (app/prefetch.py) before it
    imported this module."""
    intent = load_project_intent(intent_path, warn=ui.warn)
    upgrading = upgrade_request(upgrade, upgrade_packages)

    def make(one: Intent, shared: SharedPins | None = None) -> ResolveSession:
        """One intent's session, with this command's options."""
        return ResolveSession(
            one,
            ui,
            offline=offline,
            refresh=refresh,
            conda_from_knowledge=conda_from_knowledge,
            platforms=platforms,
            upgrade=upgrading,
            watch=watch,
            accept_edits=accept_edits,
            shared=shared,
        )

    if intent.profiles:  # one project, several kinds of machine: every profile, or those named
        from lockguard.app.profile_resolve import resolve_profiles

        return resolve_profiles(ui, intent, profiles, make, check_only=check_only, wait=wait)
    if profiles:
        raise InputError(
            f"--profile {', '.join(profiles)}: {intent.source or 'the intent'} has no [profiles]",
            hint="add [profiles.NAME] tables to the intent, or resolve without --profile",
        )
    session = make(intent)
    writing = not check_only
    if writing:
        session.will_write()
    with session.lock_set(exclusive=writing, wait=wait):
        session.refuse_unsafe_files(writing=writing)
        try:
            resolved = session.resolve()
        except UnknownProject as exc:
            raise at_its_line(exc, intent, session.names_near(exc.name)) from None
        except Unsatisfiable as exc:
            raise at_requirement_line(exc, intent) from None
        outputs = resolved.outputs
        if not resolved.remembered:  # a remembered resolution passed this gate with these inputs
            session.refuse_what_check_rejects(resolved.platforms, outputs)
            session.remember()
        changes = session.relock.changes(outputs)
        if not writing:
            return ResolveOutcome(
                changes=changes,
                checked=True,
                stale=tuple(session.stale(outputs)),
                vanished=tuple(session.relock.vanished()),
            )
        written = session.write(outputs)
        return ResolveOutcome(
            changes=changes,
            checked=False,
            written=tuple(written),
            summary=session.summary(resolved, written),
        )


def _same_lock(current: str | None, text: str) -> bool:
    """An untouched file that differs from what resolve would write only in its proof lines holds
    the same lock: `--check` does not call it stale. A file written before lockguard recorded the
    knowledge fingerprint (or under other knowledge) would otherwise turn every project's CI red
    on upgrade; `lockguard check` runs its full rules on such a file, and the next resolve writes
    its proof."""
    if current is None or not is_sealed_intact(current):
        return False
    return without_proof(current) == without_proof(text)


class _Recorder(Messages):
    """The messages, with the info lines and warnings of a resolve kept (in order) for its memo;
    -v detail and the end of a status line pass through unrecorded."""

    def __init__(self, ui: Messages) -> None:
        self._ui = ui
        self.messages: list[tuple[str, str]] = []
        self.verbose = getattr(ui, "verbose", 0)  # -v (the cli's Ui has it)

    def info(self, message: str) -> None:
        self.messages.append(("info", message))
        self._ui.info(message)

    def warn(self, message: str) -> None:
        self.messages.append(("warn", message))
        self._ui.warn(message)

    def debug(self, message: str) -> None:
        self._ui.debug(message)

    def done(self) -> None:
        self._ui.done()


class ResolveSession:
    def __init__(
        self,
        intent: Intent,
        ui: Messages,
        *,
        offline: bool = False,
        refresh: bool = False,
        conda_from_knowledge: bool = False,
        platforms: tuple[str, ...] = (),
        upgrade: UpgradeRequest | None = None,
        watch: ResolveWatchFactory | None = None,
        accept_edits: bool = False,
        shared: SharedPins | None = None,
    ) -> None:
        # the existing lock: preferences, memo key, change report (and, with accept_edits, the
        # hand edits adopted rather than reverted); `shared`: what a project's other profiles ask
        self.relock = Relock(intent, upgrade, accept_edits, shared)
        if intent.has_cooldown:  # the cut-off the lock recorded, or a fresh one (app/cooldowns.py)
            from lockguard.app.cooldowns import settle

            intent = self.relock.intent = settle(
                intent, self.relock.texts, renew=self.relock.upgrade.everything, say=ui.debug
            )
        self.intent = intent
        self.ui = ui
        self.offline = offline
        self.refresh = refresh
        self.conda_from_knowledge = conda_from_knowledge
        self.platforms = platforms
        self.watch = watch or (lambda _counts: SilentWatch())  # the cli's progress line, or nothing
        self._machine_facts: tuple | None = None
        self._memo: ResolveMemo | None = None
        # the same entry under the key of the lock it writes (app/relock.py)
        self._memo_after: ResolveMemo | None = None
        # what `remember` stores once the gate has passed it
        self._to_remember: Remembered | None = None
        # what check's rules found in the files just resolved (None: none resolved yet)
        self._findings: list | None = None
        self._made: Resolution | None = None  # the resolution run, for the names it saw

    # -- resolution, or the memo of an identical one -------------------------------------------

    def resolve(self) -> Resolved:
        """The lock files for the intent: from the resolution memo when every input is what it
        was (io/index/resolve_memo.py says what that takes), else resolved and rendered."""
        root = self._root()
        machine = self._machine()
        self.relock.refuse_unknown_names()
        options = {
            "conda_from_knowledge": self.conda_from_knowledge,
            "platforms": self.platforms,
            "constraints": os.environ.get("LOCKGUARD_CONSTRAINTS", ""),
        }
        machine_repr = repr(machine) if machine is not None else None
        memo = self._memo = ResolveMemo(
            Cache(),
            memo_key(
                intent_repr=repr(self.intent),
                machine_repr=machine_repr,
                options={**options, **self.relock.memo_options()},
            ),
            ttl=PAGE_TTL_SECONDS,
            offline=self.offline,
        )
        if not self.refresh:
            allowed = {relative for relative, _kind, _platform in lock_paths(self.intent)}
            remembered = memo.lookup(allowed)
            if remembered is not None:
                for kind, text in remembered.messages:
                    (self.ui.info if kind == "info" else self.ui.warn)(text)
                self.ui.debug(
                    f"resolution memo: the {len(remembered.pages)} index pages this intent's last "
                    "resolve read are unchanged and fresh; its lock files are used as they are"
                )
                return Resolved(
                    {root / relative: text for relative, text in remembered.outputs.items()},
                    tuple(remembered.platforms),
                    remembered.summary,
                    remembered=True,
                )
        from lockguard.app.resolution import certified  # with the resolver (_resolution)

        recorder = _Recorder(self.ui)
        resolution = self._made = self._resolution(recorder)
        lock = resolution.run()
        platforms = tuple(p.target.platform for p in lock.platforms)
        # each file's proof (check reads it instead of running its rules), and what the rules
        # find: resolve's gate (refuse_what_check_rejects)
        outputs, self._findings = certified(self.intent, root, platforms, resolution.render(lock))
        resolved = Resolved(outputs, platforms, resolution.summary(lock))
        pages = {
            url: sha
            for client in resolution.index_clients
            for url, sha in client.pages_used.items()
        }
        hashed = {
            url: sha for url, sha in pages.items() if sha is not None
        }  # a page without one: no memo
        if pages and len(hashed) == len(pages) and not resolution.conda_solved:
            entry = self._to_remember = Remembered(
                {str(path.relative_to(root)): text for path, text in outputs.items()},
                list(resolved.platforms),
                resolved.summary,
                recorder.messages,
                hashed,
            )
            after = self.relock.memo_options_after(entry.outputs)
            self._memo_after = ResolveMemo(
                Cache(),
                memo_key(
                    intent_repr=repr(self.intent),
                    options={**options, **after},
                    machine_repr=machine_repr,
                ),
                ttl=PAGE_TTL_SECONDS,
                offline=self.offline,
            )
        return resolved

    def names_near(self, name: str) -> list[str]:
        """Project names close to one no index has, for a did-you-mean (none without a run)."""
        return self._made.names_near(name) if self._made is not None else []

    def remember(self) -> None:
        """Keep the resolution just made for the next resolve of the same inputs; called once
        its lock files passed the check gate (a memo hit skips the gate: same inputs, same
        files)."""
        if self._to_remember is not None and self._memo is not None:
            self._memo.store(self._to_remember)
            if self._memo_after is not None and self._memo_after.key != self._memo.key:
                entry = self._to_remember
                self._memo_after.store(
                    Remembered(
                        entry.outputs,
                        entry.platforms,
                        entry.summary,
                        [m for m in entry.messages if m[1] not in self.relock.said],
                        entry.pages,
                    )
                )
            self._to_remember = None

    def run(self) -> Lock:
        """Resolve the intent (no memo, nothing rendered): `lockguard outdated`'s resolution."""
        return self._resolution(self.ui).run()

    def _resolution(self, ui: Messages) -> Resolution:
        # the resolver, the index client and the lock file writers load only here: a memo hit
        # answers in about a third of the time without them
        from lockguard.app.resolution import Resolution

        return Resolution(
            self.intent,
            ui,
            self.relock,
            root=self._root(),
            machine=self._machine(),
            offline=self.offline,
            refresh=self.refresh,
            conda_from_knowledge=self.conda_from_knowledge,
            platforms=self.platforms,
            watch=self.watch,
        )

    def _root(self) -> Path:
        return self.intent.source.root if self.intent.source else Path.cwd()

    def _machine(self):
        """The machine's facts, detected once, and only for `cuda = "auto"` or `gpu = "auto"`."""
        if self.intent.cuda.mode != "auto" and not self.intent.gpu_auto:
            return None
        if self._machine_facts is None:
            # the NVML adapter, for "auto" only (a fixed CUDA never asks the machine)
            from lockguard.io.machine.nvml import detect_machine

            self._machine_facts = (detect_machine(),)
        return self._machine_facts[0]

    # -- files -----------------------------------------------------------------------------------

    def refuse_what_check_rejects(
        self, platforms: tuple[str, ...], outputs: dict[Path, str]
    ) -> None:
        """resolve never writes (or passes --check with) a lock that `lockguard check` rejects."""
        from lockguard.app.resolution import certified  # after a resolution, which imported it
        from lockguard.check.gate import refuse_what_check_rejects

        if self._findings is None:
            self._findings = certified(self.intent, self._root(), platforms, outputs)[1]
        refuse_what_check_rejects(self._findings)

    def stale(self, outputs: dict[Path, str]) -> list[Path]:
        """The files `--check` calls out of date: other than resolve would write them, beyond
        their proof lines (_same_lock)."""
        return [
            path
            for path, current in self._differing(outputs)
            if not _same_lock(current, outputs[path])
        ]

    def _differing(self, outputs: dict[Path, str]) -> list[tuple[Path, str | None]]:
        """(path, its text now) of each file whose bytes differ from what resolve would write."""
        out = []
        for path, text in outputs.items():
            try:
                current = read_lock_text(path)
            except InputError:
                current = None  # not a readable lock file: certainly not what resolve would write
            if current != text:
                out.append((path, current))
        return out

    def lock_set(self, *, exclusive: bool = True, wait: bool = True):
        """The kernel lock on the project's lock set (io/project/lock_set.py), for the command's
        whole run: exclusive to write it, shared to compare with it (`--check`)."""
        return LockSet(
            self._root(),
            exclusive=exclusive,
            command="resolve",
            wait=wait,
            on_wait=self.ui.info,
            warn=self.ui.warn,
        )

    def refuse_unsafe_files(self, *, writing: bool) -> None:
        """Before anything is resolved, read or written: every lock file of the intent is a
        regular file inside the project, or missing (io/project/project_paths.py); exit 2 naming
        the path and what is there otherwise (a symlink out of the project, a folder, a FIFO)."""
        refuse_unsafe_files(
            self._root(),
            [relative for relative, _kind, _platform in lock_paths(self.intent)],
            doing="write" if writing else "read",
        )

    def will_write(self) -> None:
        """From now on an interrupt says the lock set is as it was (the commit is all or nothing:
        io/project/files.py) until it is written."""
        where = self.intent.source.root if self.intent.source else Path.cwd()
        interrupts.now(
            f"interrupted before the lock set was written: the lock files in {where} are as they "
            "were; run `lockguard resolve` again"
        )

    def write(self, outputs: dict[Path, str]) -> list[Path]:
        """Write the lock files whose bytes differ from what is on disk (a file already holding
        exactly these bytes is left alone: rewriting it would cost an fsync and change nothing).
        The command has refused unsafe targets before it resolved (refuse_unsafe_files).
        Temporary files a killed earlier write left next to them are removed first (the lock set
        is held: no other run is writing them)."""
        for leftover in remove_leftovers(outputs):
            self.ui.info(f"removed {leftover}, left by an interrupted write")
        changed = {path for path, _current in self._differing(outputs)}
        where = self.intent.source.root if self.intent.source else Path.cwd()
        written = (
            f"interrupted after the new lock set was written in {where}; it is whole (`lockguard "
            "check` confirms it)"
            if changed
            else f"interrupted; the lock set in {where} was current already: nothing was changed"
        )
        write_all_atomic(
            {p: t for p, t in outputs.items() if p in changed},
            root=self.intent.source.root if self.intent.source else None,
            on_commit=lambda: interrupts.now(written),
        )
        interrupts.now(written)
        remember(outputs.values())  # lets `check` name the entries of a later hand edit (LG102)
        for path in outputs:
            self.ui.info(f"wrote {path}" if path in changed else f"unchanged: {path}")
        return [p for p in outputs if p in changed]

    @staticmethod
    def summary(resolved: Resolved, written: list[Path]) -> dict:
        return {"written": [str(p) for p in written], **resolved.summary}
