"""model/pep440.py decides plain versions and simple specifiers without packaging (the check
path's import budget); every answer must be packaging's. Compared here on many generated cases,
and on the forms it must hand to packaging."""

from __future__ import annotations

import itertools
import random

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from lockguard.model import pep440
from lockguard.model.pep440 import Spec

rng = random.Random(15)


def _version() -> str:
    release = ".".join(str(rng.choice([0, 0, 1, 2, 3, 9, 10, 12, 105])) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.3:
        release += "+" + ".".join(rng.choice(["cu121", "cpu", "1", "20", "abc", "CU118", "a-b"])
                                  for _ in range(rng.randint(1, 2)))
    return release


def _clause() -> str:
    op = rng.choice(["==", "!=", "<=", ">=", "<", ">", "~="])
    version = ".".join(str(rng.choice([0, 1, 2, 3, 12])) for _ in range(rng.randint(1, 3)))
    if op in ("==", "!=") and rng.random() < 0.3:
        version += ".*"
    elif op in ("==", "!=") and rng.random() < 0.2:
        version += "+cu121"
    if op == "~=" and "." not in version:
        version += ".0"
    return op + (" " if rng.random() < 0.2 else "") + version


VERSIONS = [_version() for _ in range(400)] + ["2.1.2+cu121", "2.1.2", "2.1", "2.1.0", "2", "12.1.105", "0", "0.0",
                                               "2.1.2+cu121.1", "01.2", " 2.1 "]
SPECS = [",".join(_clause() for _ in range(rng.randint(1, 3))) for _ in range(300)] + [
    ">=2.1,<2.2", "==2.1.*", "~=12.1", "<0", "", "!=2.1.*", ">2.1", "==2.1.2+cu121", ">=1.26, <2"]


def spec_pair(text: str) -> tuple[Spec, SpecifierSet] | None:
    """lockguard's Spec and packaging's SpecifierSet of `text`; None when packaging refuses it
    (and then Spec must refuse it too)."""
    try:
        real = SpecifierSet(text)
    except InvalidSpecifier:
        with pytest.raises(InvalidSpecifier):
            Spec(text)
        return None
    return Spec(text), real


def test_plain_versions_sort_and_print_as_packaging_does():
    unique = list(dict.fromkeys(VERSIONS))
    assert pep440.sorted_versions(unique) == [str(v) for v in sorted(Version(t) for t in unique)]
    for a, b in itertools.islice(itertools.product(unique, repeat=2), 20000):
        assert pep440.less(a, b) == (Version(a) < Version(b)), (a, b)
    for text in unique:
        assert pep440.normalized(text) == str(Version(text))
        assert pep440.public(text) == Version(text).public
        assert pep440.release_and_local(text) == (Version(text).release, Version(text).local)


def test_simple_specifiers_decide_as_packaging_does():
    for spec_text in SPECS:
        fast, real = Spec(spec_text), SpecifierSet(spec_text)
        assert fast._clauses is not None, spec_text  # these are all decided without packaging
        for version in VERSIONS:
            for pre in (None, True):
                assert fast.contains(version, prereleases=pre) == real.contains(version, prereleases=pre), \
                    (spec_text, version)
        assert str(fast) == str(real)


@pytest.mark.parametrize("version", ["2.1.0a1", "2.1.0.post1", "2.1.0.dev3", "1!2.0", "v2.1", "2.1.0rc1+cu121",
                                     "2.1.0-1"])
def test_other_versions_go_to_packaging(version):
    assert pep440.sort_key(version) is None
    for spec_text in (">=2.1,<2.2", "==2.1.*", ">2.0", "!=2.1.0"):
        for pre in (None, True):
            assert Spec(spec_text).contains(version, prereleases=pre) == \
                SpecifierSet(spec_text).contains(version, prereleases=pre)
    assert pep440.public(version) == Version(version).public
    assert pep440.sorted_versions([version, "2.1"]) == [str(v) for v in sorted([Version(version), Version("2.1")])]


@pytest.mark.parametrize("text", [">=2.1a1", "===2.1", "==2.1.0.post1", ">=1!2", "== 2.1 .*", "~=2"])
def test_other_specifiers_go_to_packaging(text):
    pair = spec_pair(text)
    if pair is None:
        return
    fast, real = pair
    assert fast._clauses is None
    for version in ("2.1", "2.1.0a2", "2.2", "1.0"):
        assert fast.contains(version, prereleases=True) == real.contains(version, prereleases=True)


@pytest.mark.parametrize("text", [">=abc", "=>2.1", ">=2.1.*", "~=2.*", "<2.1+local", "2.1"])
def test_invalid_specifiers_are_refused_like_packaging(text):
    with pytest.raises(InvalidSpecifier):
        SpecifierSet(text)
    with pytest.raises(InvalidSpecifier):
        Spec(text)


def test_the_check_knowledge_needs_no_packaging_fallback():
    """The shipped knowledge's specifiers are all simple: the check decides them itself."""
    from lockguard.io.knowledge_files import load_knowledge

    knowledge = load_knowledge(validate=False)
    specs = [r.torch for r in knowledge.archs] + [r.requires_python for r in knowledge.patches]
    specs += [r.cuda for r in knowledge.sysroots] + [r.cuda for r in knowledge.cuda_specs if r.cuda is not None]
    specs += [s for rule in knowledge.torch_pins for s in rule.pins.values()]
    assert specs and all(isinstance(s, Spec) and s._clauses is not None for s in specs)


# -- generated from pieces, odd spellings included: every answer packaging's, or packaging asked ----

_PIECES = ["0", "1", "2", "01", "007", "12", "105", ".", ".", ".", "+", "cu121", "CU118", "a", "b1", "_", "-",
           "*", " ", "rc1", "post1", "dev0", "!", "v", "\u0661", "x"]
_OPS = ["==", "!=", "<=", ">=", "<", ">", "~=", "===", "=", "<>", ""]


def _odd_version(r: random.Random) -> str:
    return "".join(r.choice(_PIECES) for _ in range(r.randint(1, 7)))


def _plain_version(r: random.Random) -> str:
    text = ".".join(r.choice(["0", "1", "2", "01", "12"]) for _ in range(r.randint(1, 3)))
    return text + r.choice(["", "", ".*", "+cu121", "+01", " "])


def _odd_spec(r: random.Random) -> str:
    return ",".join(r.choice(_OPS) + r.choice(["", " "]) + (_odd_version(r) if r.random() < 0.3 else _plain_version(r))
                    for _ in range(r.randint(1, 3)))


def test_odd_spellings_agree_with_packaging():
    from packaging.version import InvalidVersion

    r = random.Random(440)
    versions = [_odd_version(r) for _ in range(3000)]
    valid = []
    for text in versions:
        try:
            version = Version(text)
        except InvalidVersion:
            assert pep440.sort_key(text) is None and pep440.release_and_local(text) is None, text
            continue
        valid.append(text)
        if pep440.sort_key(text) is not None:
            assert pep440.normalized(text) == str(version), text
        assert pep440.public(text) == version.public, text
        assert pep440.release_and_local(text) == (version.release, version.local), text
    assert len(valid) > 200  # the generator makes enough valid versions to mean something
    for a, b in zip(valid, reversed(valid), strict=True):
        assert pep440.less(a, b) == (Version(a) < Version(b)), (a, b)
    decided = 0
    for _ in range(3000):
        text = _odd_spec(r)
        pair = spec_pair(text)
        if pair is None:
            continue
        fast, real = pair
        decided += fast._clauses is not None
        assert str(fast) == str(real), text
        for version in r.sample(valid, 20):
            for pre in (None, True, False):
                assert fast.contains(version, prereleases=pre) == real.contains(version, prereleases=pre), \
                    (text, version, pre)
    assert decided > 100  # and enough specifiers decided without packaging
