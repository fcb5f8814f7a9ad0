"""Offline replay without Qt: resolve (url, time) to a stored record and build the response."""
