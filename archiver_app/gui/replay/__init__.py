"""The replay view: archived pages in an offline QtWebEngine browser (see widget.py)."""
