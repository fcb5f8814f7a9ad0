"""The two docs for the next contributor stay maps, not logs: ARCHITECTURE.md at most 200
lines, benchmarks.md at most 150 (history belongs in git log)."""

from __future__ import annotations

from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize(("name", "most"), [("ARCHITECTURE.md", 200), ("benchmarks.md", 150)])
def test_the_contributor_docs_stay_short(name: str, most: int) -> None:
    lines = (DOCS / name).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= most, f"{name} has {len(lines)} lines: at most {most}"
