"""The release workflow's update feed: every signed package lands under the keys the Tauri
updater asks for ({os}-{arch}-{installer}, then {os}-{arch})."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts/release/updater_manifest.py"
spec = importlib.util.spec_from_file_location("updater_manifest", SCRIPT)
um = importlib.util.module_from_spec(spec)
spec.loader.exec_module(um)

RELEASE = [
    "ArtifactFlow_1.2.3_amd64.deb",
    "ArtifactFlow-1.2.3-1.x86_64.rpm",
    "ArtifactFlow_1.2.3_amd64.AppImage",
    "ArtifactFlow_1.2.3_universal.app.tar.gz",
    "ArtifactFlow_1.2.3_x64-setup.exe",
    "ArtifactFlow_1.2.3_x64_en-US.msi",
]


def write_release(folder: Path) -> None:
    for name in RELEASE:
        (folder / name).write_bytes(b"package")
        (folder / f"{name}.sig").write_text(f"sig-of-{name}\n")
    (folder / "ArtifactFlow_1.2.3_universal.dmg").write_bytes(b"not an update package")


def test_every_platform_and_installer_has_its_key(tmp_path):
    write_release(tmp_path)
    base = "https://github.com/o/r/releases/download/v1.2.3"
    m = um.manifest("1.2.3", tmp_path, base, "notes", "2026-01-02T03:04:05Z")
    p = m["platforms"]
    assert m["version"] == "1.2.3" and m["pub_date"] == "2026-01-02T03:04:05Z"
    expected = {
        "linux-x86_64": "ArtifactFlow_1.2.3_amd64.AppImage",
        "linux-x86_64-appimage": "ArtifactFlow_1.2.3_amd64.AppImage",
        "linux-x86_64-deb": "ArtifactFlow_1.2.3_amd64.deb",
        "linux-x86_64-rpm": "ArtifactFlow-1.2.3-1.x86_64.rpm",
        "darwin-aarch64": "ArtifactFlow_1.2.3_universal.app.tar.gz",
        "darwin-x86_64": "ArtifactFlow_1.2.3_universal.app.tar.gz",
        "darwin-aarch64-app": "ArtifactFlow_1.2.3_universal.app.tar.gz",
        "darwin-x86_64-app": "ArtifactFlow_1.2.3_universal.app.tar.gz",
        "windows-x86_64": "ArtifactFlow_1.2.3_x64-setup.exe",
        "windows-x86_64-nsis": "ArtifactFlow_1.2.3_x64-setup.exe",
        "windows-x86_64-msi": "ArtifactFlow_1.2.3_x64_en-US.msi",
    }
    assert set(p) == set(expected)
    for key, package in expected.items():
        assert p[key] == {"url": f"{base}/{package}", "signature": f"sig-of-{package}"}, key


def test_unsigned_release_is_an_error_and_cli_prints_json(tmp_path):
    assert um.platform_keys("ArtifactFlow_1.2.3_universal.dmg") == []
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--version", "v1.2.3", "--assets", str(tmp_path), "--base-url", "https://x"],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "no signed update packages" in out.stderr
    write_release(tmp_path)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--version", "v1.2.3", "--assets", str(tmp_path), "--base-url", "https://x/"],
        capture_output=True,
        text=True,
        check=True,
    )
    feed = json.loads(out.stdout)
    assert feed["version"] == "1.2.3"
    assert feed["platforms"]["linux-x86_64-deb"]["url"] == "https://x/ArtifactFlow_1.2.3_amd64.deb"
