"""Alembic environment: migrations always run on a connection handed in by the library."""

from __future__ import annotations

from alembic import context

from archiver_app.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached by misuse of the alembic CLI
    raise RuntimeError("run migrations through archiver_app.store.schema.upgrade()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
