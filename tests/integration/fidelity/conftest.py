"""Fixtures of the fidelity suite: the captured corpus (shared by its modules) and the real
ReplayWeb.page."""

from tests.helpers.replay_tools import browser, replaywebpage
from tests.integration.fidelity.captured import suite

__all__ = ["browser", "replaywebpage", "suite"]
