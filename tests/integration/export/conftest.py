"""Fixtures of the export tests: the real ReplayWeb.page."""

from tests.helpers.replay_tools import replaywebpage

__all__ = ["replaywebpage"]
