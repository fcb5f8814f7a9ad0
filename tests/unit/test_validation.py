"""Untrusted slugs, paths and URLs are refused with a clear reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archiver_app.errors import InputError
from archiver_app.validation import (
    safe_join,
    safe_relative,
    validate_capture_url,
    validate_slug,
)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "empty"),
        ("example.org/page", "no scheme"),
        ("file:///etc/passwd", "unsupported URL scheme"),
        ("javascript:alert(1)", "unsupported URL scheme"),
        ("http://", "no host"),
        ("http://exa mple.org/", "white space"),
        ("http://example.org:99999/", "malformed"),
        ("ftp://example.org/", "unsupported"),
    ],
)
def test_bad_urls(url: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason):
        validate_capture_url(url)


def test_good_url_is_stripped() -> None:
    assert validate_capture_url("  https://example.org/a?b=c  ") == "https://example.org/a?b=c"


@pytest.mark.parametrize(
    "path", ["../x", "a/../../x", "/etc/passwd", "C:/Windows/x", "a\\..\\..\\x", "", "a\x00b"]
)
def test_unsafe_relative_paths(path: str) -> None:
    with pytest.raises(InputError):
        safe_relative(path)


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    with pytest.raises(InputError, match="outside"):
        safe_join(root, "link/secret")


@given(st.lists(st.sampled_from(["a", "b", "..", ".", "/", "\\", "c:", "x y"]), max_size=8))
def test_safe_join_never_escapes(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    root = Path("/tmp/archiver-hypothesis-root")
    try:
        joined = safe_join(root, "".join(parts))
    except InputError:
        return
    assert joined.resolve().is_relative_to(root.resolve())


@pytest.mark.parametrize("slug", ["", "A", "../x", "a/b", "-x", "x" * 101])
def test_bad_slugs(slug: str) -> None:
    with pytest.raises(InputError):
        validate_slug(slug)
