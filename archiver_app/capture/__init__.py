"""Capturing pages with a real browser: discovery and launch, recording, extraction, crawling."""
