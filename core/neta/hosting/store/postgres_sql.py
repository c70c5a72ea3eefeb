"""The SQL of the PostgreSQL store, shared by its blocking engine and its run calls.

``neta.hosting.store.postgres`` (the ``Store``, blocking, a thread-safe pool) and
``neta.hosting.store.postgres_calls`` (the calls a run makes, on the event loop, an async
pool) say the same things to the database: every statement is here once, and every call is one
of them (one round trip, its own transaction), except where a refusal needs a second look.
"""

from __future__ import annotations

NOW = "extract(epoch from clock_timestamp())"
"""The database server's clock, in seconds (every worker reads the same one)."""

SCHEMA_VERSION = 2
"""The schema version this code writes; older databases are migrated to it on start."""

MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    entry TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE todos (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    body TEXT NOT NULL
);
CREATE TABLE pending_clarify (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    choices TEXT,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE lost_clarify (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    choices TEXT,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE INDEX leases_by_owner ON leases (owner);
""",
    2: """
ALTER TABLE pending_clarify ADD COLUMN approval TEXT;
ALTER TABLE lost_clarify ADD COLUMN approval TEXT;
""",
}


MIGRATION_LOCK = 0x6E657461  # an arbitrary advisory-lock key for schema changes

CREATE_SESSION = (
    f"INSERT INTO sessions (id, entry, created, updated) VALUES (%s, %s, {NOW}, {NOW}) "
    "ON CONFLICT (id) DO NOTHING"
)
EXISTS = "SELECT 1 FROM sessions WHERE id = %s"
VERSION = "SELECT version FROM sessions WHERE id = %s"
DELETE_SESSION = "DELETE FROM sessions WHERE id = %s"
DELETE_IDLE = (
    f"DELETE FROM sessions WHERE updated < {NOW} - %s AND id NOT IN "
    f"(SELECT session_id FROM leases WHERE expires > {NOW}) RETURNING id"
)

# A save is one statement (so no lock outlives it: a worker's event loop may run other calls
# before it reads the answer). It writes only for the lease holder, whose lease row it locks
# until it commits (a takeover waits for it); no row back means the lease is not held. The
# history from ``start`` on is replaced: positions ``start`` to ``end - 1`` are written, the
# ones past them dropped.
SAVE = f"""
WITH held AS (
    SELECT 1 FROM leases WHERE session_id = %(sid)s AND owner = %(owner)s FOR UPDATE
), bump AS (
    UPDATE sessions SET updated = {NOW}, version = version + 1
    WHERE id = %(sid)s AND EXISTS (SELECT 1 FROM held) RETURNING version
), cut AS (
    DELETE FROM messages
    WHERE session_id = %(sid)s AND seq >= %(end)s AND EXISTS (SELECT 1 FROM bump)
), put AS (
    INSERT INTO messages (session_id, seq, body)
    SELECT %(sid)s, %(start)s + n - 1, body
    FROM unnest(%(bodies)s::text[]) WITH ORDINALITY AS m(body, n)
    WHERE EXISTS (SELECT 1 FROM bump)
    ON CONFLICT (session_id, seq) DO UPDATE SET body = EXCLUDED.body
), todo AS (
    INSERT INTO todos (session_id, body)
    SELECT %(sid)s, %(todos)s::text
    WHERE %(todos)s::text IS NOT NULL AND EXISTS (SELECT 1 FROM bump)
    ON CONFLICT (session_id) DO UPDATE SET body = EXCLUDED.body
)
SELECT version FROM bump
"""

# One statement: one snapshot of the session, its messages and its todos.
LOAD = (
    "SELECT entry, version, "
    "ARRAY(SELECT body FROM messages WHERE session_id = s.id ORDER BY seq), "
    "(SELECT body FROM todos WHERE session_id = s.id) "
    "FROM sessions s WHERE id = %s"
)

ADD_QUESTION = (
    f"INSERT INTO pending_clarify VALUES (%s, %s, %s, %s, {NOW}, %s) "
    "ON CONFLICT (request_id) DO UPDATE SET question = EXCLUDED.question, "
    "choices = EXCLUDED.choices, approval = EXCLUDED.approval"
)
REMOVE_QUESTION = "DELETE FROM pending_clarify WHERE request_id = %s"
PENDING_QUESTIONS = "SELECT * FROM pending_clarify WHERE session_id = %s ORDER BY created"
ORPHANED = f"session_id NOT IN (SELECT session_id FROM leases WHERE expires > {NOW})"
NAMED = "request_id = ANY(%s)"
LOSE_QUESTIONS = (  # format with ORPHANED or NAMED; one statement: moved whole, or not at all
    "WITH gone AS (DELETE FROM pending_clarify WHERE {which} RETURNING *), "
    "kept AS (INSERT INTO lost_clarify SELECT * FROM gone ON CONFLICT (request_id) DO NOTHING) "
    "SELECT * FROM gone"
)
TAKE_LOST = "DELETE FROM lost_clarify WHERE session_id = %s RETURNING *"

# Takes a free or lapsed lease, or renews the holder's; no row when refused or unknown.
ACQUIRE = (
    f"INSERT INTO leases SELECT id, %s, {NOW} + %s FROM sessions WHERE id = %s "
    "ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, expires = EXCLUDED.expires "
    f"WHERE leases.owner = EXCLUDED.owner OR leases.expires <= {NOW} "
    "RETURNING owner"
)
RENEW = f"UPDATE leases SET expires = {NOW} + %s WHERE owner = %s"
RELEASE = "DELETE FROM leases WHERE session_id = %s AND owner = %s"
OWNER = f"SELECT owner FROM leases WHERE session_id = %s AND expires > {NOW}"
RELEASE_ALL = "DELETE FROM leases WHERE owner = %s"
