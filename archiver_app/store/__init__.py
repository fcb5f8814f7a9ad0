"""Persistence: SQLAlchemy models, the engine factory and schema migrations."""
