"""Archiver: personal web archiving on the desktop.

The package is split into plain-Python core layers (store, warc, capture, replay,
layout, mirror, tasks) and one Qt front end (gui). Nothing happens at import time.
"""

__version__ = "0.1.0"
