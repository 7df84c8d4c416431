"""PEP 440 for the pre-commit path: plain versions and simple specifiers, without packaging.

Importing packaging.version and packaging.specifiers (with the typing module they need) costs
about half of Python's start-up, and `lockguard check` must stay within three start-ups. What the
check compares is plain: lock files pin release versions (2.1.2, 12.1.105, 2.1.2+cu121) and the
knowledge bounds them with simple specifiers (>=2.1,<2.2, ==2.1.*, ~=12.1). Those are decided
here by PEP 440's rules; every other form (pre-, post- and dev-releases, epochs, `===`, a leading
`v`, ...) is handed to packaging, so an answer is never a guess (tests/test_pep440.py compares
both on many cases).
"""

from __future__ import annotations

_OPERATORS = ("~=", "==", "!=", "<=", ">=", "<", ">")  # two-character ones first


def _plain(text: str) -> tuple[tuple[int, ...], tuple[str, ...] | None] | None:
    """(release numbers, local segments or None) of a plain version; None for any other form."""
    public, plus, local = text.strip().partition("+")
    parts = public.split(".")
    if not all(p and p.isascii() and p.isdigit() for p in parts):
        return None
    segments = None
    if plus:
        segments = tuple(local.replace("-", ".").replace("_", ".").lower().split("."))
        if not all(s and s.isascii() and s.isalnum() for s in segments):
            return None
        segments = tuple(str(int(s)) if s.isdigit() else s for s in segments)  # +cu121.01 is +cu121.1
    return tuple(int(p) for p in parts), segments


def _trim(release: tuple[int, ...]) -> tuple[int, ...]:
    end = len(release)
    while end and release[end - 1] == 0:
        end -= 1
    return release[:end]


def _local_key(segments: tuple[str, ...] | None) -> tuple:
    if segments is None:
        return (0,)  # no local label sorts before any
    return (1, tuple((1, int(s), "") if s.isdigit() else (0, 0, s) for s in segments))


def sort_key(text: str) -> tuple | None:
    """A key that orders plain versions as packaging.version.Version does; None: not plain."""
    found = _plain(text)
    return None if found is None else (_trim(found[0]), _local_key(found[1]))


def normalized(text: str) -> str | None:
    """packaging's str() of a plain version (2.01.0+CU121 -> 2.1.0+cu121); None: not plain."""
    found = _plain(text)
    if found is None:
        return None
    release, local = found
    return ".".join(str(n) for n in release) + (f"+{'.'.join(local)}" if local is not None else "")


def public(text: str) -> str:
    """Version(text).public: the normalized version without its local label."""
    found = _plain(text)
    if found is not None:
        return ".".join(str(n) for n in found[0])
    from packaging.version import Version

    return Version(text).public


def release_and_local(text: str) -> tuple[tuple[int, ...], str | None] | None:
    """(Version(text).release, Version(text).local); None when text is not a PEP 440 version."""
    found = _plain(text)
    if found is not None:
        return found[0], ".".join(found[1]) if found[1] is not None else None
    from packaging.version import InvalidVersion, Version

    try:
        version = Version(text)
    except InvalidVersion:
        return None
    return version.release, version.local


def less(a: str, b: str) -> bool:
    """Version(a) < Version(b)."""
    key_a, key_b = sort_key(a), sort_key(b)
    if key_a is not None and key_b is not None:
        return key_a < key_b
    from packaging.version import Version

    return Version(a) < Version(b)


def sorted_versions(texts) -> list[str]:
    """Normalized versions, ascending; packaging sorts them when one is not plain."""
    texts = list(texts)
    keys = {t: sort_key(t) for t in texts}
    if all(k is not None for k in keys.values()):
        return [normalized(t) for t in sorted(texts, key=keys.__getitem__)]  # stable, as packaging's
    from packaging.version import Version

    return [str(v) for v in sorted(Version(t) for t in texts)]


def _clause(text: str):
    """(operator, release, local segments, wildcard) of one simple clause, or None."""
    text = text.strip()
    op = next((o for o in _OPERATORS if text.startswith(o)), None)
    if op is None or text.startswith("==="):
        return None
    version = text[len(op):].strip()
    wildcard = version.endswith(".*")
    if wildcard:
        if op not in ("==", "!=") or version[:-2] != version[:-2].strip():
            return None
        version = version[:-2]
    found = _plain(version)
    if found is None:
        return None
    release, local = found
    if local is not None and (op not in ("==", "!=") or wildcard):
        return None  # a local label is only allowed with == and != (packaging refuses the rest)
    if op == "~=" and len(release) < 2:
        return None
    return op, release, local, wildcard


def _holds(clause, release: tuple[int, ...], local: tuple[str, ...] | None) -> bool:
    op, spec, spec_local, wildcard = clause
    if wildcard:
        padded = (release + (0,) * len(spec))[: len(spec)]
        return (padded == spec) == (op == "==")
    if op in ("==", "!="):
        if spec_local is not None:  # compare with the candidate's local label
            same = (_trim(release), _local_key(local)) == (_trim(spec), _local_key(spec_local))
        else:
            same = _trim(release) == _trim(spec)
        return same == (op == "==")
    mine, theirs = _trim(release), _trim(spec)
    if op == ">=":
        return mine >= theirs
    if op == "<=":
        return mine <= theirs
    if op == ">":
        return mine > theirs  # a local label of the same release is not greater (PEP 440)
    if op == "<":
        return mine < theirs
    # ~=X.Y[.Z]: >= that, and the same release up to the last component but one
    prefix = spec[:-1]
    return mine >= theirs and (release + (0,) * len(prefix))[: len(prefix)] == prefix


class Spec:
    """A version specifier set. A simple one (all clauses plain) is decided here, for plain
    versions; anything else goes to packaging's SpecifierSet (`.specifier`, made on first use).
    A text that is not a valid specifier raises packaging's InvalidSpecifier at once."""

    __slots__ = ("text", "_clauses", "_packaging")

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"a specifier is a string, not {type(text).__name__}")
        self.text = text
        self._packaging = None
        clauses = [_clause(part) for part in text.split(",") if part.strip()]
        self._clauses = clauses if all(c is not None for c in clauses) else None
        if self._clauses is None:
            self.specifier  # noqa: B018 - validates now: a broken knowledge row is named at load

    @property
    def specifier(self):
        """packaging's SpecifierSet of the same text (for the resolver, and for other forms)."""
        if self._packaging is None:
            from packaging.specifiers import SpecifierSet

            self._packaging = SpecifierSet(self.text)
        return self._packaging

    def contains(self, item, prereleases: bool | None = None) -> bool:
        if self._clauses is not None:
            found = _plain(item) if isinstance(item, str) else None
            if found is not None:  # a final release: `prereleases` changes nothing
                return all(_holds(c, found[0], found[1]) for c in self._clauses)
        return self.specifier.contains(item, prereleases=prereleases)

    def __contains__(self, item) -> bool:
        return self.contains(item)

    def __str__(self) -> str:
        return str(self.specifier)

    def __repr__(self) -> str:
        return f"<Spec({self.text!r})>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Spec):
            return self.text == other.text
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)
