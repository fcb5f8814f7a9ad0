"""Exports of a collection, a tag or a search result as WACZ or as a plain folder."""

from archiver_app.export.plan import Selection
from archiver_app.export.writer import ExportResult, check_destination, export

__all__ = [
    "ExportResult",
    "Selection",
    "check_destination",
    "export",
]
