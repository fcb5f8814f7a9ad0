"""Verified copies on external drives under a retention policy: director, copier, scrub."""
