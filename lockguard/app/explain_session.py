"""`lockguard explain`'s session: the platform's requirements.lock (and environment.yml for a conda
package) read and parsed, and the explanation of why a package is pinned at its version."""

from __future__ import annotations

from pathlib import Path

from lockguard.app.project import load_one_intent
from lockguard.check.why_pinned import explain_conda, explain_pip
from lockguard.errors import InputError
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.project.intent_file import source_of
from lockguard.io.project.project_files import parse_lock
from lockguard.io.project.project_paths import read_project_lock
from lockguard.lockfiles.syntax import clip
from lockguard.model.lock_paths import lock_file


def explain_package(
    package: str,
    intent_path: Path | None,
    platform: str | None,
    *,
    warn=None,
    profile: str | None = None,
):
    """(the explanation, the platform read); InputError for a platform or package the lock lacks."""
    intent = load_one_intent(intent_path, profile, warn=warn)
    if platform is not None and platform not in intent.platforms:
        raise InputError(
            f"--platform: the lock has no {clip(platform)} section (it locks "
            f"{', '.join(intent.platforms)})",
            key="platforms",
            hint=f"pass one of: {', '.join(intent.platforms)}; or add the platform to the intent's "
            "platforms and run `lockguard resolve`",
        )
    platform = platform or intent.platforms[0]
    root = source_of(intent).root
    knowledge = load_knowledge()
    req_file, env_file = (lock_file(intent, k, platform) for k in ("requirements", "environment"))
    req_path, env_path = root / req_file, root / env_file
    # the project's own files: never through a symlink out of it (io/project/project_paths.py)
    req_text = read_project_lock(root, req_file)
    if req_text is None:
        raise InputError(
            f"{req_path} does not exist", file=str(req_path), hint="run `lockguard resolve` first"
        )
    lock = parse_lock("requirements", req_text, str(req_path))
    found = explain_pip(package, lock, knowledge, platform, source_of(intent).path.name)
    env_text = None if intent.pip_only else read_project_lock(root, env_file)
    if found is None and env_text is not None:
        env = parse_lock("environment", env_text, str(env_path))
        if package in env.conda:
            found = explain_conda(package, env.conda[package][0], knowledge, intent.conda)
    if found is None:
        raise InputError(
            f"{clip(package)} is not in {req_path.name}"
            + (f" or {env_path.name}" if env_text else ""),
            hint="`lockguard explain` reads the lock; run `lockguard resolve` if the intent "
            "changed",
        )
    return found, platform
