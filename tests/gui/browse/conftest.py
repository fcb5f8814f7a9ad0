"""The browsing tests' display and site (see tests/integration/browse/conftest.py)."""

from tests.integration.browse.conftest import browse_site, xvfb_display

__all__ = ["browse_site", "xvfb_display"]
