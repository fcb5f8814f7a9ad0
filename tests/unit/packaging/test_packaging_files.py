"""Packaging files agree with the package: one version, valid desktop files, icon sizes."""

from __future__ import annotations

import importlib.metadata
import os
import plistlib
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from archiver_app import __version__

ROOT = Path(__file__).resolve().parents[3]
LINUX = ROOT / "packaging" / "linux"
APP_ID = "io.github.archiver.Archiver"


def test_version_has_one_source() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?[a-z0-9.]+)?", __version__)
    # pyproject's version is dynamic, read by hatch from archiver_app/__init__.py.
    assert importlib.metadata.version("archiver-app") == __version__
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert 'path = "archiver_app/__init__.py"' in pyproject


def test_changelog_and_metainfo_name_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[(\d[^\]]*)\]", changelog, re.MULTILINE)  # after [Unreleased]
    assert first is not None and first.group(1) == __version__
    meta = ET.parse(LINUX / f"{APP_ID}.metainfo.xml").getroot()
    assert meta.findtext("id") == APP_ID
    releases = meta.find("releases")
    assert releases is not None
    assert releases[0].get("version") == __version__
    assert meta.findtext("launchable") == f"{APP_ID}.desktop"


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils")
def test_desktop_entry_is_valid() -> None:
    result = subprocess.run(
        ["desktop-file-validate", str(LINUX / f"{APP_ID}.desktop")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


@pytest.mark.skipif(not shutil.which("appstreamcli"), reason="appstream")
def test_metainfo_is_valid() -> None:
    result = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--pedantic",
         str(LINUX / f"{APP_ID}.metainfo.xml")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_macos_plist_and_windows_version_template() -> None:
    plist = plistlib.loads((ROOT / "packaging" / "macos" / "Info.plist").read_bytes())
    assert plist["CFBundleIdentifier"] == APP_ID
    assert plist["CFBundleName"] == "Archiver"
    template = (ROOT / "packaging" / "windows" / "version_info.txt").read_text(encoding="utf-8")
    assert "@VERSION@" in template and "@VERSION_TUPLE@" in template
    iss = (ROOT / "packaging" / "windows" / "archiver.iss").read_text(encoding="utf-8")
    assert "AppVersion={#AppVersion}" in iss


def test_shell_scripts_parse() -> None:
    scripts = sorted((ROOT / "packaging").rglob("*.sh"))
    assert {p.name for p in scripts} >= {"install.sh", "make-tarball.sh", "install-system-deps.sh"}
    for script in scripts:
        result = subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False)
        assert result.returncode == 0, (script, result.stderr)
        assert os.access(script, os.X_OK), f"{script} is not executable"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_make_icons_writes_every_size_ico_and_icns(tmp_path: Path) -> None:
    # A subprocess: the generator creates a QGuiApplication, which must not leak into
    # the GUI tests of this process.
    result = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "make_icons.py"), "--out", str(tmp_path)],
        capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for size in (16, 24, 32, 48, 64, 128, 256, 512, 1024):
        assert png_size(tmp_path / f"archiver-{size}.png") == (size, size)
    from PIL import Image

    with Image.open(tmp_path / "archiver.ico") as ico:
        assert {(16, 16), (32, 32), (48, 48), (256, 256)} <= set(ico.info["sizes"])
    with Image.open(tmp_path / "archiver.icns") as icns:
        assert {(512, 512, 2), (256, 256, 1), (16, 16, 2)} <= set(icns.info["sizes"])
    # The icon is drawn, not blank: the centre of the large PNG is opaque.
    with Image.open(tmp_path / "archiver-256.png") as png:
        assert png.getpixel((128, 128))[3] == 255
        assert png.getpixel((0, 0))[3] == 0  # rounded corner stays transparent


def test_make_icons_refuses_a_broken_svg(tmp_path: Path) -> None:
    bad = tmp_path / "bad.svg"
    bad.write_text("<svg this is not xml", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "make_icons.py"),
         "--svg", str(bad), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert result.returncode != 0
    assert "not a valid SVG" in result.stderr
    assert not list((tmp_path / "out").glob("*.png"))


def test_build_spec_compiles_and_reads_the_version_from_the_package() -> None:
    source = (ROOT / "build.spec").read_text(encoding="utf-8")
    compile(source, "build.spec", "exec")  # the macOS/Windows branches cannot run here
    assert '__version__ = "([^"]+)"' in source
    assert 'name="archiver"' in source
