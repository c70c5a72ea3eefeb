"""The SQL of the PostgreSQL store, shared by its blocking engine and its run calls.

``neta.hosting.store.postgres`` (the ``Store``, blocking, a thread-safe pool) and
``neta.hosting.store.postgres_calls`` (the calls a run makes, on the event loop, an async
pool) say the same things to the database: every statement is here once, and every call is one
of them (one round trip, its own transaction), except where a refusal needs a second look.
"""

from __future__ import annotations

NOW = "extract(epoch from clock_timestamp())"
"""The database server's clock, in seconds (every worker reads the same one)."""

SCHEMA_VERSION = 3
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
    3: """
ALTER TABLE sessions ADD COLUMN run_owner TEXT;
ALTER TABLE sessions ADD COLUMN run_interrupted BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX sessions_running ON sessions (id) WHERE run_owner IS NOT NULL;
""",
}


MIGRATION_LOCK = 0x6E657461  # an arbitrary advisory-lock key for schema changes

CREATE_SESSION = (  # a JSON array of {id, entry}: several sessions made at once
    f"INSERT INTO sessions (id, entry, created, updated) SELECT c.id, c.entry, {NOW}, {NOW} "
    "FROM json_to_recordset(%s::json) AS c(id text, entry text) ON CONFLICT (id) DO NOTHING"
)
EXISTS = "SELECT 1 FROM sessions WHERE id = %s"
VERSION = "SELECT version FROM sessions WHERE id = %s"
DELETE_SESSION = "DELETE FROM sessions WHERE id = %s"
DELETE_IDLE = (
    f"DELETE FROM sessions WHERE updated < {NOW} - %s AND id NOT IN "
    f"(SELECT session_id FROM leases WHERE expires > {NOW}) RETURNING id"
)

# A save is one statement (so no lock outlives it: a worker's event loop may run other calls
# before it reads the answer), and so are the saves of several sessions made at once (a
# worker's runs save together: ``neta.hosting.store.postgres_batches``). Each writes only for its
# session's lease holder, whose lease row it locks until it commits (a takeover waits for it);
# a session whose lease is not held gets no row back. Its history from ``start`` on is
# replaced: positions ``start`` to ``stop - 1`` are written (``messages``), the ones past them
# dropped. ``saves`` and ``messages`` are JSON arrays of objects (``postgres_rows.saves_params``).
SAVE = f"""
WITH saves AS (
    SELECT * FROM json_to_recordset(%(saves)s::json)
        AS s(sid text, owner text, stop int, todos text, run text)
), held AS (
    SELECT l.session_id FROM leases l JOIN saves s ON l.session_id = s.sid AND l.owner = s.owner
    ORDER BY l.session_id FOR UPDATE OF l
), bump AS (
    UPDATE sessions SET updated = {NOW}, version = version + 1,
        run_owner = CASE s.run WHEN 'going' THEN s.owner
            WHEN 'ended' THEN NULL WHEN 'interrupted' THEN NULL ELSE run_owner END,
        run_interrupted = CASE s.run WHEN 'going' THEN FALSE
            WHEN 'interrupted' THEN TRUE ELSE run_interrupted END
    FROM saves s WHERE sessions.id = s.sid AND s.sid IN (SELECT session_id FROM held)
    RETURNING sessions.id, sessions.version
), cut AS (
    DELETE FROM messages m USING saves s
    WHERE m.session_id = s.sid AND m.seq >= s.stop AND s.sid IN (SELECT id FROM bump)
), put AS (
    INSERT INTO messages (session_id, seq, body)
    SELECT m.sid, m.seq, m.body
    FROM json_to_recordset(%(messages)s::json) AS m(sid text, seq int, body text)
    WHERE m.sid IN (SELECT id FROM bump)
    ON CONFLICT (session_id, seq) DO UPDATE SET body = EXCLUDED.body
), todo AS (
    INSERT INTO todos (session_id, body)
    SELECT s.sid, s.todos FROM saves s
    WHERE s.todos IS NOT NULL AND s.sid IN (SELECT id FROM bump)
    ON CONFLICT (session_id) DO UPDATE SET body = EXCLUDED.body
)
SELECT id, version FROM bump
"""

# One statement: one snapshot of the session, its messages and its todos.
LOAD = (
    "SELECT entry, version, "
    "ARRAY(SELECT body FROM messages WHERE session_id = s.id ORDER BY seq), "
    "(SELECT body FROM todos WHERE session_id = s.id), run_owner "
    "FROM sessions s WHERE id = %s"
)

# Questions are added (a JSON array of objects: ``postgres_rows.questions_params``) and removed
# (an array of request ids) several at a time: a worker's runs ask and settle them together.
ADD_QUESTION = (
    "INSERT INTO pending_clarify "
    f"SELECT q.request_id, q.session_id, q.question, q.choices, {NOW}, q.approval "
    "FROM json_to_recordset(%s::json) "
    "AS q(request_id text, session_id text, question text, choices text, approval text) "
    "ON CONFLICT (request_id) DO UPDATE SET question = EXCLUDED.question, "
    "choices = EXCLUDED.choices, approval = EXCLUDED.approval"
)
REMOVE_QUESTION = "DELETE FROM pending_clarify WHERE request_id = ANY(%s)"
PENDING_QUESTIONS = "SELECT * FROM pending_clarify WHERE session_id = %s ORDER BY created"
ORPHANED = f"session_id NOT IN (SELECT session_id FROM leases WHERE expires > {NOW})"
NAMED = "request_id = ANY(%s)"
LOSE_QUESTIONS = (  # format with ORPHANED or NAMED; one statement: moved whole, or not at all
    "WITH gone AS (DELETE FROM pending_clarify WHERE {which} RETURNING *), "
    "kept AS (INSERT INTO lost_clarify SELECT * FROM gone ON CONFLICT (request_id) DO NOTHING) "
    "SELECT * FROM gone"
)
TAKE_LOST = "DELETE FROM lost_clarify WHERE session_id = %s RETURNING *"

# A statement that locks several lease rows locks them in the order of their session ids
# (``ORDER BY``), so that two of them (a heartbeat, a batch of saves, of claims, of releases)
# never wait for each other in a circle.

# Takes a free or lapsed lease, or renews the holder's, of each {sid, owner, ttl} of a JSON
# array; a session's id comes back for each lease taken, none when refused or unknown.
ACQUIRE = (
    f"INSERT INTO leases SELECT s.id, a.owner, {NOW} + a.ttl "
    "FROM json_to_recordset(%s::json) AS a(sid text, owner text, ttl float8) "
    "JOIN sessions s ON s.id = a.sid ORDER BY s.id "
    "ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, expires = EXCLUDED.expires "
    f"WHERE leases.owner = EXCLUDED.owner OR leases.expires <= {NOW} "
    "RETURNING session_id"
)
KNOWN = "SELECT id FROM sessions WHERE id = ANY(%s)"
RENEW = (
    "WITH held AS (SELECT session_id FROM leases WHERE owner = %(owner)s "
    "ORDER BY session_id FOR UPDATE) "
    f"UPDATE leases SET expires = {NOW} + %(ttl)s "
    "FROM held WHERE leases.session_id = held.session_id"
)
RELEASE = (  # a JSON array of {sid, owner}: several released at once
    "WITH gone AS (SELECT l.session_id FROM leases l "
    "JOIN json_to_recordset(%s::json) AS r(sid text, owner text) "
    "ON l.session_id = r.sid AND l.owner = r.owner ORDER BY l.session_id FOR UPDATE OF l) "
    "DELETE FROM leases WHERE session_id IN (SELECT session_id FROM gone)"
)
OWNER = f"SELECT owner FROM leases WHERE session_id = %s AND expires > {NOW}"
RELEASE_ALL = (
    "WITH gone AS (SELECT session_id FROM leases WHERE owner = %s "
    "ORDER BY session_id FOR UPDATE) "
    "DELETE FROM leases WHERE session_id IN (SELECT session_id FROM gone)"
)
LEASE_OWNERS = f"SELECT DISTINCT owner FROM leases WHERE expires > {NOW} ORDER BY owner"
INTERRUPTED_RUNS = (
    "SELECT id FROM sessions WHERE run_owner IS NOT NULL AND id NOT IN "
    f"(SELECT session_id FROM leases WHERE expires > {NOW}) ORDER BY id"
)
TAKE_INTERRUPTED = (
    "UPDATE sessions SET run_interrupted = FALSE WHERE id = %s AND run_interrupted RETURNING 1"
)

RETRY_SAFE = frozenset(
    {
        CREATE_SESSION,  # does nothing the second time
        EXISTS,
        VERSION,
        DELETE_SESSION,
        SAVE,  # the same messages at the same positions (the version counts one save more)
        LOAD,
        ADD_QUESTION,  # writes the same row again
        REMOVE_QUESTION,
        PENDING_QUESTIONS,
        ACQUIRE,  # the holder renews its own lease
        RENEW,
        RELEASE,
        OWNER,
        RELEASE_ALL,
        KNOWN,
    }
)
"""The statements made again on a fresh connection when theirs turned out broken (the server
restarted): reads, and writes whose second run leaves what the first left, should the first
have committed before its answer was lost (``neta.hosting.store.postgres_retry``)."""
