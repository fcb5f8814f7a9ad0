"""The frozen (PyInstaller one-folder) app, run headless as a user runs it.

Builds ``build.spec`` once for the module into a temporary folder (about 100 s and 570 MB
on the 2-core reference machine), or uses the build named by ``ARCHIVER_FROZEN_APP``
(``make test-frozen`` builds with ``make dist`` and points it at ``dist/archiver/archiver``).
Select or skip the module with ``-m frozen`` / ``-m "not frozen"``.

Every check runs the bundle's own binary from outside the source tree, so it proves what
the bundle holds: the version, Alembic migrations (``init`` creates the schema from the
bundled scripts), QtWebEngine (``doctor``, ``--self-test``), Playwright's driver (finding a
Playwright Chromium runs the bundled node), a real capture of a local page and its replay
rendered by the bundled QtWebEngine (``archiver replay --screenshot``), and the tarball's
installer.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app import __version__
from archiver_app.capture.browser import find_browser
from archiver_app.store import schema
from tests.helpers.frozen_build import wait_for_build
from tests.helpers.testsite import LocalSite

ROOT = Path(__file__).resolve().parents[2]
FROZEN_ENV = "ARCHIVER_FROZEN_APP"
SYSTEM_CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [pytest.mark.frozen, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def frozen_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Path of the frozen ``archiver`` binary: given, or built here and removed afterwards."""
    given = os.environ.get(FROZEN_ENV)
    if given:
        app = Path(given).absolute()
        assert app.is_file(), f"{FROZEN_ENV}={given} is not a file"
        yield app
        return
    built = wait_for_build()  # started with the run (tests/helpers/frozen_build.py)
    if built is not None:
        yield built
        return
    out = tmp_path_factory.mktemp("frozen")
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(out / "dist"), "--workpath", str(out / "work"),
         str(ROOT / "build.spec")],
        capture_output=True, text=True, timeout=1500, check=False, cwd=out,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-5000:]
    try:
        yield out / "dist" / "archiver" / "archiver"
    finally:
        shutil.rmtree(out, ignore_errors=True)


def run(
    app: Path, *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(app), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
    )


def doctor_lines(stdout: str) -> dict[str, str]:
    return {line.split()[1]: line for line in stdout.splitlines() if line[:3] in ("ok ", "!! ")}


def test_bundle_holds_what_the_app_loads_by_path_and_nothing_it_does_not(
    frozen_app: Path,
) -> None:
    internal = frozen_app.parent / "_internal"
    node = internal / "playwright" / "driver" / "node"
    assert node.is_file() and os.access(node, os.X_OK), "Playwright's node lost its exec bit"
    assert (internal / "playwright" / "driver" / "package" / "cli.js").is_file()
    engine = internal / "PySide6" / "Qt" / "libexec" / "QtWebEngineProcess"
    assert os.access(engine, os.X_OK)

    source = ROOT / "archiver_app" / "store" / "migrations"
    wanted = {
        p.relative_to(source).as_posix()
        for p in source.rglob("*")
        if p.suffix in {".py", ".mako"} and "__pycache__" not in p.parts
    }
    bundled_dir = internal / "archiver_app" / "store" / "migrations"
    bundled = {p.relative_to(bundled_dir).as_posix() for p in bundled_dir.rglob("*")}
    assert "script.py.mako" in wanted
    assert wanted <= bundled, f"migrations missing from the bundle: {wanted - bundled}"

    # Imported by name, so a hidden import; without it imports silently fall back to warcio.
    assert list((internal / "fastwarc").glob("_fastwarc*.so")), "FastWARC's native module"

    assert (internal / "resources" / "icons" / "archiver.svg").is_file()
    assert (internal / "resources" / "icons" / "generated" / "archiver-256.png").is_file()
    licences = (internal / "licenses" / "README.txt").read_text(encoding="utf-8")
    for component in ("PySide6_Essentials", "playwright", "SQLAlchemy", "alembic", "warcio"):
        assert f"\n{component} " in licences, component

    # What the core needs is in: Pillow (screenshot comparison), PDFium, the CSL processor,
    # signing and RFC 3161 timestamps, the PostgreSQL driver (shared libraries).
    for name in (
        "PIL",
        "pypdfium2",
        "citeproc",
        "cryptography",
        "rfc3161_client",
        "psycopg_binary",
    ):
        assert (internal / name).exists(), f"{name} is missing from the bundle"
    # Development-only distributions and trimmed Qt parts stay out.
    for name in ("pytest", "pywb", "gevent", "PyInstaller", "mypy"):
        assert not (internal / name).exists(), f"{name} was bundled"
    qt = internal / "PySide6" / "Qt"
    assert not (qt / "plugins" / "platformthemes" / "libqgtk3.so").exists()
    assert not (qt / "plugins" / "platforminputcontexts" / "libqtvirtualkeyboardplugin.so").exists()
    assert not (qt / "qml").exists()
    assert not list(internal.glob("libgtk-3.so*"))
    locales = sorted(p.name for p in (qt / "translations" / "qtwebengine_locales").iterdir())
    assert locales == ["en-US.pak"]
    for plugin in ("libqxcb.so", "libqwayland.so", "libqoffscreen.so"):
        assert (qt / "plugins" / "platforms" / plugin).is_file(), plugin


def test_version_matches_the_package(frozen_app: Path, tmp_path: Path) -> None:
    result = run(frozen_app, "--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"archiver {__version__}"


def test_init_runs_the_bundled_migrations_and_doctor_reports_like_the_source_app(
    frozen_app: Path, tmp_path: Path
) -> None:
    lib = tmp_path / "lib"
    created = run(frozen_app, "--library", str(lib), "init", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert "created library" in created.stdout
    with sqlite3.connect(lib / "library.db") as db:
        revision = db.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert revision == schema.head_revision()
    assert {"snapshots", "records", "copies", "snapshot_fts"} <= tables

    info = run(frozen_app, "--library", str(lib), "info", "--json", cwd=tmp_path)
    assert json.loads(info.stdout)["schema"] == schema.head_revision()

    doctor = run(frozen_app, "--library", str(lib), "doctor", cwd=tmp_path)
    lines = doctor_lines(doctor.stdout)
    for name in ("archiver", "library", "schema", "qtwebengine", "disk"):
        assert lines[name].startswith("ok "), lines[name]
    assert __version__ in lines["archiver"]
    expected = find_browser(with_version=True)
    if expected is None:
        assert lines["browser"].startswith("!! ")
    else:
        assert lines["browser"].split(None, 2)[2] == expected.describe()


def test_doctor_explains_a_missing_browser(frozen_app: Path, tmp_path: Path) -> None:
    if Path("/snap/bin/chromium").exists():
        pytest.skip("a snap Chromium is always found")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": str(empty), "PLAYWRIGHT_BROWSERS_PATH": str(empty), "ARCHIVER_BROWSER": ""}
    result = run(frozen_app, "--library", str(tmp_path / "lib"), "doctor", cwd=tmp_path, env=env)
    assert result.returncode == 1
    line = doctor_lines(result.stdout)["browser"]
    assert line.startswith("!! browser")
    assert "none found" in line and "archiver browser install" in line


def test_frozen_playwright_driver_finds_playwrights_chromium(
    frozen_app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not SYSTEM_CHROMIUM.is_file():
        pytest.skip("needs a Chromium to stand in for Playwright's download")
    browsers = tmp_path / "ms-playwright"
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(browsers))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:  # where the source app's Playwright expects its Chromium
        expected = Path(pw.chromium.executable_path)
    expected.parent.mkdir(parents=True)
    expected.symlink_to(SYSTEM_CHROMIUM)
    result = run(frozen_app, "browser", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]  # a line about a headless shell may follow
    assert first.startswith("Playwright Chromium ")
    assert first.endswith(f"(playwright) at {expected}")


def test_self_test_opens_the_main_window_offscreen(frozen_app: Path, tmp_path: Path) -> None:
    result = run(
        frozen_app, "--library", str(tmp_path / "lib"), "--self-test", cwd=tmp_path,
        env={"QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test ok" in result.stdout


def test_capture_of_a_local_page(frozen_app: Path, tmp_path: Path, test_site: LocalSite) -> None:
    if find_browser() is None:
        pytest.skip("no browser to capture with")
    lib = tmp_path / "lib"
    url = test_site.page_url(3)
    result = run(frozen_app, "--library", str(lib), "capture", url, "--timeout", "60", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "captured 1 of 1 page" in result.stdout
    with sqlite3.connect(lib / "library.db") as db:
        rows = db.execute("SELECT url, state, folder FROM snapshots").fetchall()
    assert [(u, s) for u, s, _f in rows] == [(url, "complete")]
    folder = lib / rows[0][2]
    from warcio.archiveiterator import ArchiveIterator

    with (folder / "capture.warc.gz").open("rb") as fh:
        responses = {
            r.rec_headers.get_header("WARC-Target-URI"): r.http_headers.get_statuscode()
            for r in ArchiveIterator(fh)
            if r.rec_type == "response"
        }
    assert responses[url] == "200"
    assert (folder / "screenshot.png").stat().st_size > 0

    # Replay it through the bundle's QtWebEngine (trimmed locales, no DevTools pak).
    png = tmp_path / "replay.png"
    replay = run(
        frozen_app, "--library", str(lib), "replay", url, "--screenshot", str(png),
        "--width", "800", "--height", "600", "--timeout", "120", cwd=tmp_path,
        env={"QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert f"served\t{url}" in replay.stdout
    from PIL import Image

    with Image.open(png) as image:
        assert image.size[0] == 800
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 10, "the replayed page rendered blank"

    # Cite it: the bundle carries citeproc's locales and the styles offered by name.
    for style in ("apa", "mla", "chicago"):
        cited = run(frozen_app, "--library", str(lib), "cite", "1", "--format", style, cwd=tmp_path)
        assert cited.returncode == 0, cited.stdout + cited.stderr
        assert url.split("?")[0] in cited.stdout


def test_tarball_installer_installs_runs_and_uninstalls(frozen_app: Path, tmp_path: Path) -> None:
    dist = frozen_app.parent.parent
    staged = subprocess.run(
        ["bash", str(ROOT / "packaging" / "linux" / "make-tarball.sh"), "--stage-only"],
        capture_output=True, text=True, check=False, timeout=300,
        env={**os.environ, "DIST": str(dist)},
    )  # fmt: skip
    assert staged.returncode == 0, staged.stderr
    stage = Path(staged.stdout.strip().splitlines()[-1])
    try:
        prefix = tmp_path / "prefix"
        home = tmp_path / "home"
        home.mkdir()
        env = {"HOME": str(home), "PATH": f"{prefix / 'bin'}:{os.environ['PATH']}"}
        installed = run(Path(stage / "install.sh"), "--prefix", str(prefix), cwd=tmp_path, env=env)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        assert f"installed Archiver {__version__} in {prefix / 'lib' / 'archiver'}" in (
            installed.stdout
        )
        link = prefix / "bin" / "archiver"
        assert link.is_symlink()
        version = run(link, "--version", cwd=tmp_path)
        assert version.stdout.strip() == f"archiver {__version__}"
        desktop = prefix / "share" / "applications" / "io.github.archiver.Archiver.desktop"
        assert f"Exec={prefix / 'lib' / 'archiver' / 'archiver'}\n" in desktop.read_text()
        icon = prefix / "share/icons/hicolor/256x256/apps/io.github.archiver.Archiver.png"
        assert icon.is_file()
        assert (prefix / "share/metainfo/io.github.archiver.Archiver.metainfo.xml").is_file()

        # A second install replaces the first as a whole; uninstall removes everything.
        again = run(Path(stage / "install.sh"), "--prefix", str(prefix), cwd=tmp_path, env=env)
        assert again.returncode == 0, again.stderr
        removed = run(
            Path(stage / "install.sh"), "--prefix", str(prefix), "--uninstall",
            cwd=tmp_path, env=env,
        )  # fmt: skip
        assert removed.returncode == 0, removed.stderr
        left = sorted(
            str(p.relative_to(prefix))
            for p in prefix.rglob("*")
            if not p.is_dir() and not p.name.endswith(".cache")  # desktop/icon caches stay
        )
        assert left == [], left
    finally:
        shutil.rmtree(stage, ignore_errors=True)
