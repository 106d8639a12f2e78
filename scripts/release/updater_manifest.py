#!/usr/bin/env python3
"""Write the Tauri updater's feed (latest.json) for one release, from its signed packages.

The release workflow downloads every `*.sig` the Tauri CLI wrote next to an installer (only
when TAURI_SIGNING_PRIVATE_KEY is set) and runs:

    updater_manifest.py --version 1.2.3 --assets DIR --base-url https://…/releases/download/v1.2.3

The app asks the feed for `{os}-{arch}-{installer}` first, then `{os}-{arch}`, so each package
is listed under its installer's key, and the default key of each OS points at the package
that can update any install there (AppImage, NSIS, the universal .app).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import urllib.parse
from pathlib import Path

ARCHES = {
    "amd64": "x86_64",
    "x86_64": "x86_64",
    "x64": "x86_64",
    "arm64": "aarch64",
    "aarch64": "aarch64",
    "i386": "i686",
    "x86": "i686",
}


ARCH_TOKEN = re.compile(r"(?:^|[-_.])(x86_64|aarch64|amd64|arm64|i386|x64|x86)(?=$|[-_.])", re.IGNORECASE)


def arch_of(name: str) -> str:
    found = ARCH_TOKEN.search(name)
    return ARCHES[found.group(1).lower()] if found else "x86_64"


def platform_keys(name: str) -> list[str]:
    """The feed keys a package file serves, most specific first; [] for files that are not updates."""
    lower = name.lower()
    if lower.endswith(".appimage") or lower.endswith(".appimage.tar.gz"):
        arch = arch_of(name)
        return [f"linux-{arch}-appimage", f"linux-{arch}"]
    if lower.endswith(".deb"):
        return [f"linux-{arch_of(name)}-deb"]
    if lower.endswith(".rpm"):
        return [f"linux-{arch_of(name)}-rpm"]
    if lower.endswith(".app.tar.gz"):
        arches = ["aarch64", "x86_64"] if "universal" in lower else [arch_of(name)]
        return [k for a in arches for k in (f"darwin-{a}-app", f"darwin-{a}")]
    if lower.endswith("-setup.exe") or lower.endswith(".nsis.zip"):
        arch = arch_of(name)
        return [f"windows-{arch}-nsis", f"windows-{arch}"]
    if lower.endswith(".msi") or lower.endswith(".msi.zip"):
        return [f"windows-{arch_of(name)}-msi"]
    return []


def manifest(version: str, assets: Path, base_url: str, notes: str, pub_date: str) -> dict:
    platforms: dict[str, dict[str, str]] = {}
    for sig in sorted(assets.glob("*.sig")):
        package = sig.name[: -len(".sig")]
        entry = {
            "signature": sig.read_text().strip(),
            "url": f"{base_url.rstrip('/')}/{urllib.parse.quote(package)}",
        }
        for key in platform_keys(package):
            # A more specific installer never loses its own key; the bare OS key goes to the
            # first package that claims it (AppImage, NSIS, the .app).
            platforms.setdefault(key, entry)
    if not platforms:
        raise SystemExit(f"no signed update packages (*.sig) in {assets}")
    return {"version": version, "notes": notes, "pub_date": pub_date, "platforms": platforms}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", required=True, help="the release's version, without the v")
    p.add_argument("--assets", required=True, type=Path, help="folder holding the *.sig files")
    p.add_argument("--base-url", required=True, help="where the release's files download from")
    p.add_argument("--notes", default=None, help="release notes (default: a pointer to the release)")
    args = p.parse_args(argv)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    notes = args.notes or f"ArtifactFlow {args.version}: see the release page for what changed."
    json.dump(manifest(args.version.lstrip("v"), args.assets, args.base_url, notes, now), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
