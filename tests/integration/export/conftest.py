"""Fixtures of the export tests: the real ReplayWeb.page and one Chromium a module."""

from tests.helpers.replay_tools import browser, replaywebpage

__all__ = ["browser", "replaywebpage"]
