"""Baseline: the whole data model of DESIGN section 3, plus full-text search on SQLite.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('collections',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=100), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('base_url', sa.Text(), nullable=True),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('policy_copies', sa.Integer(), nullable=True),
    sa.Column('policy_destinations', sa.JSON(), nullable=True),
    sa.Column('policy_max_age_seconds', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_collections')),
    sa.UniqueConstraint('slug', name=op.f('uq_collections_slug'))
    )
    op.create_table('destinations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('label', sa.String(length=200), nullable=False),
    sa.Column('last_mount_path', sa.Text(), nullable=True),
    sa.Column('capacity_bytes', sa.BigInteger(), nullable=True),
    sa.Column('free_bytes', sa.BigInteger(), nullable=True),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('scrub_interval_days', sa.Integer(), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(), nullable=True),
    sa.Column('last_scrub_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_destinations')),
    sa.UniqueConstraint('label', name=op.f('uq_destinations_label')),
    sa.UniqueConstraint('uuid', name=op.f('uq_destinations_uuid'))
    )
    op.create_table('settings',
    sa.Column('key', sa.String(length=100), nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_settings'))
    )
    op.create_table('tags',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tags')),
    sa.UniqueConstraint('name', name=op.f('uq_tags_name'))
    )
    op.create_table('import_sources',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('mode', sa.String(length=8), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('cursor', sa.Text(), nullable=True),
    sa.Column('stats', sa.JSON(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('registered_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_import_sources_collection_id_collections')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_import_sources'))
    )
    op.create_table('jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('ruleset_version', sa.Integer(), nullable=False),
    sa.Column('settings_age', sa.Integer(), nullable=False),
    sa.Column('items_queued', sa.Integer(), nullable=False),
    sa.Column('items_downloaded', sa.Integer(), nullable=False),
    sa.Column('bytes_downloaded', sa.BigInteger(), nullable=False),
    sa.Column('r1xx', sa.Integer(), nullable=False),
    sa.Column('r2xx', sa.Integer(), nullable=False),
    sa.Column('r3xx', sa.Integer(), nullable=False),
    sa.Column('r4xx', sa.Integer(), nullable=False),
    sa.Column('r5xx', sa.Integer(), nullable=False),
    sa.Column('runk', sa.Integer(), nullable=False),
    sa.Column('error_count', sa.Integer(), nullable=False),
    sa.Column('concurrency', sa.Integer(), nullable=False),
    sa.Column('retry_count', sa.Integer(), nullable=False),
    sa.Column('max_retries', sa.Integer(), nullable=False),
    sa.Column('schedule', sa.String(length=32), nullable=True),
    sa.Column('next_run_at', sa.DateTime(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('coverage_json', sa.Text(), nullable=True),
    sa.Column('coverage_md', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=True),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_jobs_collection_id_collections')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs'))
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_jobs_status_priority_id'), ['status', 'priority', 'id'], unique=False)

    op.create_table('job_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(), nullable=False),
    sa.Column('level', sa.String(length=10), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_job_log_job_id_jobs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_job_log'))
    )
    with op.batch_alter_table('job_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_job_log_job_id_id'), ['job_id', 'id'], unique=False)

    op.create_table('rulesets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('rules', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_rulesets_job_id_jobs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rulesets')),
    sa.UniqueConstraint('job_id', 'version', name=op.f('uq_rulesets_job_id_version'))
    )
    op.create_table('snapshots',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uid', sa.String(length=40), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=True),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('url_key', sa.Text(), nullable=False),
    sa.Column('url_group', sa.Text(), nullable=False),
    sa.Column('domain', sa.String(length=255), nullable=False),
    sa.Column('captured_at', sa.DateTime(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('http_status', sa.Integer(), nullable=True),
    sa.Column('mime', sa.String(length=255), nullable=True),
    sa.Column('title', sa.Text(), nullable=True),
    sa.Column('snippet', sa.Text(), nullable=True),
    sa.Column('language', sa.String(length=35), nullable=True),
    sa.Column('capture_backend', sa.String(length=32), nullable=True),
    sa.Column('capture_fidelity', sa.String(length=16), nullable=True),
    sa.Column('provenance', sa.JSON(), nullable=True),
    sa.Column('folder', sa.Text(), nullable=True),
    sa.Column('warc_file', sa.Text(), nullable=True),
    sa.Column('warc_offset', sa.BigInteger(), nullable=True),
    sa.Column('warc_length', sa.BigInteger(), nullable=True),
    sa.Column('content_hash', sa.String(length=80), nullable=True),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('fs_version', sa.String(length=32), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], name=op.f('fk_snapshots_collection_id_collections')),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_snapshots_job_id_jobs'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshots')),
    sa.UniqueConstraint('uid', name=op.f('uq_snapshots_uid'))
    )
    with op.batch_alter_table('snapshots', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_snapshots_captured_at'), ['captured_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_collection_id_captured_at'), ['collection_id', 'captured_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_content_hash'), ['content_hash'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_domain_captured_at'), ['domain', 'captured_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_fs_version_id'), ['fs_version', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_job_id'), ['job_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_state_captured_at'), ['state', 'captured_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_url_group_captured_at'), ['url_group', 'captured_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_snapshots_url_key_captured_at'), ['url_key', 'captured_at'], unique=False)

    op.create_table('workers',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('version', sa.String(length=32), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('current_job_id', sa.Integer(), nullable=True),
    sa.Column('disk_free', sa.BigInteger(), nullable=True),
    sa.Column('memory_rss', sa.BigInteger(), nullable=True),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('heartbeat_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['current_job_id'], ['jobs.id'], name=op.f('fk_workers_current_job_id_jobs'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workers'))
    )
    op.create_table('files',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('snapshot_id', sa.Integer(), nullable=True),
    sa.Column('local_state', sa.String(length=16), nullable=False),
    sa.Column('external_path', sa.Text(), nullable=True),
    sa.Column('verified_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_files_snapshot_id_snapshots'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_files')),
    sa.UniqueConstraint('path', name=op.f('uq_files_path'))
    )
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_files_sha256'), ['sha256'], unique=False)
        batch_op.create_index(batch_op.f('ix_files_snapshot_id'), ['snapshot_id'], unique=False)

    op.create_table('pages',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('depth', sa.Integer(), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('attempts_remaining', sa.Integer(), nullable=False),
    sa.Column('claimed_by', sa.String(length=64), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(), nullable=True),
    sa.Column('ruleset_version', sa.Integer(), nullable=True),
    sa.Column('skip_reason', sa.Text(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('snapshot_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_pages_job_id_jobs'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_pages_snapshot_id_snapshots'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pages')),
    sa.UniqueConstraint('job_id', 'url', name=op.f('uq_pages_job_id_url'))
    )
    with op.batch_alter_table('pages', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pages_job_id_state_priority_id'), ['job_id', 'state', 'priority', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_pages_state_lease_expires_at'), ['state', 'lease_expires_at'], unique=False)

    op.create_table('snapshot_tags',
    sa.Column('snapshot_id', sa.Integer(), nullable=False),
    sa.Column('tag_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_snapshot_tags_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['tag_id'], ['tags.id'], name=op.f('fk_snapshot_tags_tag_id_tags'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('snapshot_id', 'tag_id', name=op.f('pk_snapshot_tags'))
    )
    with op.batch_alter_table('snapshot_tags', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_snapshot_tags_tag_id_snapshot_id'), ['tag_id', 'snapshot_id'], unique=False)

    op.create_table('copies',
    sa.Column('file_id', sa.Integer(), nullable=False),
    sa.Column('destination_id', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('mtime', sa.DateTime(), nullable=True),
    sa.Column('verified_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['destination_id'], ['destinations.id'], name=op.f('fk_copies_destination_id_destinations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['file_id'], ['files.id'], name=op.f('fk_copies_file_id_files'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('file_id', 'destination_id', name=op.f('pk_copies'))
    )
    with op.batch_alter_table('copies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_copies_destination_id_state'), ['destination_id', 'state'], unique=False)

    op.create_table('records',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('url_key', sa.Text(), nullable=False),
    sa.Column('ts', sa.String(length=17), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('record_type', sa.String(length=16), nullable=False),
    sa.Column('status', sa.Integer(), nullable=True),
    sa.Column('mime', sa.String(length=255), nullable=True),
    sa.Column('digest', sa.String(length=80), nullable=True),
    sa.Column('file_id', sa.Integer(), nullable=False),
    sa.Column('offset', sa.BigInteger(), nullable=False),
    sa.Column('length', sa.BigInteger(), nullable=False),
    sa.Column('snapshot_id', sa.Integer(), nullable=True),
    sa.Column('revisit_of_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['file_id'], ['files.id'], name=op.f('fk_records_file_id_files')),
    sa.ForeignKeyConstraint(['revisit_of_id'], ['records.id'], name=op.f('fk_records_revisit_of_id_records')),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_records_snapshot_id_snapshots'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_records'))
    )
    with op.batch_alter_table('records', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_records_digest'), ['digest'], unique=False)
        batch_op.create_index(batch_op.f('ix_records_file_id_offset'), ['file_id', 'offset'], unique=False)
        batch_op.create_index(batch_op.f('ix_records_snapshot_id'), ['snapshot_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_records_url_key_ts'), ['url_key', 'ts'], unique=False)

    op.create_table('relations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('parent_page_id', sa.Integer(), nullable=False),
    sa.Column('child_page_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['child_page_id'], ['pages.id'], name=op.f('fk_relations_child_page_id_pages'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_relations_job_id_jobs'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_page_id'], ['pages.id'], name=op.f('fk_relations_parent_page_id_pages'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_relations')),
    sa.UniqueConstraint('parent_page_id', 'child_page_id', name=op.f('uq_relations_parent_page_id_child_page_id'))
    )
    with op.batch_alter_table('relations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_relations_child_page_id'), ['child_page_id'], unique=False)
    op.create_table('page_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('page_id', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=False),
    sa.Column('ruleset_version', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.Column('outcome', sa.String(length=16), nullable=True),
    sa.Column('http_status', sa.Integer(), nullable=True),
    sa.Column('final_url', sa.Text(), nullable=True),
    sa.Column('snapshot_id', sa.Integer(), nullable=True),
    sa.Column('bytes_written', sa.BigInteger(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_page_attempts_job_id_jobs'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['page_id'], ['pages.id'], name=op.f('fk_page_attempts_page_id_pages'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_page_attempts_snapshot_id_snapshots'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_page_attempts'))
    )
    with op.batch_alter_table('page_attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_page_attempts_job_id_id'), ['job_id', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_page_attempts_page_id_attempt'), ['page_id', 'attempt'], unique=False)



    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE snapshot_fts USING fts5("
            "title, url, body, tags, tokenize = 'unicode61 remove_diacritics 2')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS snapshot_fts")
    with op.batch_alter_table('page_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_page_attempts_page_id_attempt'))
        batch_op.drop_index(batch_op.f('ix_page_attempts_job_id_id'))

    op.drop_table('page_attempts')
    with op.batch_alter_table('relations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_relations_child_page_id'))

    op.drop_table('relations')
    with op.batch_alter_table('records', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_records_url_key_ts'))
        batch_op.drop_index(batch_op.f('ix_records_snapshot_id'))
        batch_op.drop_index(batch_op.f('ix_records_file_id_offset'))
        batch_op.drop_index(batch_op.f('ix_records_digest'))

    op.drop_table('records')
    with op.batch_alter_table('copies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_copies_destination_id_state'))

    op.drop_table('copies')
    with op.batch_alter_table('snapshot_tags', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_snapshot_tags_tag_id_snapshot_id'))

    op.drop_table('snapshot_tags')
    with op.batch_alter_table('pages', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pages_state_lease_expires_at'))
        batch_op.drop_index(batch_op.f('ix_pages_job_id_state_priority_id'))

    op.drop_table('pages')
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_files_snapshot_id'))
        batch_op.drop_index(batch_op.f('ix_files_sha256'))

    op.drop_table('files')
    op.drop_table('workers')
    with op.batch_alter_table('snapshots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_snapshots_url_key_captured_at'))
        batch_op.drop_index(batch_op.f('ix_snapshots_url_group_captured_at'))
        batch_op.drop_index(batch_op.f('ix_snapshots_state_captured_at'))
        batch_op.drop_index(batch_op.f('ix_snapshots_job_id'))
        batch_op.drop_index(batch_op.f('ix_snapshots_fs_version_id'))
        batch_op.drop_index(batch_op.f('ix_snapshots_domain_captured_at'))
        batch_op.drop_index(batch_op.f('ix_snapshots_content_hash'))
        batch_op.drop_index(batch_op.f('ix_snapshots_collection_id_captured_at'))
        batch_op.drop_index(batch_op.f('ix_snapshots_captured_at'))

    op.drop_table('snapshots')
    op.drop_table('rulesets')
    with op.batch_alter_table('job_log', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_job_log_job_id_id'))

    op.drop_table('job_log')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_jobs_status_priority_id'))

    op.drop_table('jobs')
    op.drop_table('import_sources')
    op.drop_table('tags')
    op.drop_table('settings')
    op.drop_table('destinations')
    op.drop_table('collections')
