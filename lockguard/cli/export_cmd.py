"""`lockguard export`: the project's lock as an SBOM (CycloneDX 1.6 JSON), on stdout or in a file.

Exit 0 with the SBOM, 2 when the lock files are missing, stale or edited (`lockguard resolve`
first) or an option is wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lockguard.cli.common import get_ui, intent_option, profile_option
from lockguard.lockfiles.formats import EXPORTS


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice([f.key for f in EXPORTS]),  # lockfiles/formats.py's export-only formats
    default=EXPORTS[0].key,
    show_default=True,
    help="cyclonedx: CycloneDX 1.6 JSON.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the SBOM to this file, atomically (default: stdout).",
)
@click.option(
    "--platform",
    default=None,
    help="Only this platform's packages (default: every platform of the lock).",
)
@intent_option
@profile_option
@click.pass_context
def export(ctx, fmt, output, platform, intent_path, profile) -> None:
    """The lock as an SBOM: every package with its purl, hashes and URLs, the CUDA stack facts."""
    from lockguard.app.export_session import export_lock

    ui = get_ui(ctx, "export")
    text = export_lock(
        intent_path,
        fmt=fmt,
        platform=platform,
        output=output,
        warn=ui.warn,
        on_wait=ui.info,
        profile=profile,
    )
    if output is None:
        sys.stdout.write(text)
    else:
        ui.info(f"wrote {output}")
