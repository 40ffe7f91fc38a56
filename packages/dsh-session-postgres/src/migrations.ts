/**
 * The schema, as numbered migrations applied by an explicit `migrate` call (never implicitly on
 * start). Each migration runs in one transaction under an advisory lock, so concurrent deploys
 * apply it once.
 */
import type pg from 'pg'
import { PgSessionError, PgSessionErrorCode } from './errors.ts'

/** The SQL of each schema version, in order: `MIGRATIONS[0]` creates version 1. */
export const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE dsh_sessions (
  id                 text    PRIMARY KEY,
  format_version     integer NOT NULL,
  created_at         bigint  NOT NULL,
  parent_id          text,
  parent_seed_length integer,
  next_seq           bigint  NOT NULL DEFAULT 0,
  -- A copy of dsh_leases.token, written in the same statement as every takeover: the append checks
  -- it on the row it updates anyway, so fencing costs no extra lock.
  fence_token        bigint  NOT NULL DEFAULT 0
);
CREATE INDEX dsh_sessions_by_created ON dsh_sessions (created_at, id);

-- No foreign key to dsh_sessions: the fenced append is the only writer and inserts only through
-- its head UPDATE of the session row, and a per-row key check cost a third of each append.
CREATE TABLE dsh_events (
  session_id text   NOT NULL,
  seq        bigint NOT NULL,
  type       text   NOT NULL,
  body       json   NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE dsh_leases (
  session_id text   PRIMARY KEY REFERENCES dsh_sessions (id),
  owner      text,
  token      bigint NOT NULL,
  expires_at timestamptz,
  -- Set when a host released the session with work still queued in its inbox.
  wants_host boolean NOT NULL DEFAULT false
);
CREATE INDEX dsh_leases_by_expiry ON dsh_leases (expires_at) WHERE owner IS NOT NULL;

CREATE TABLE dsh_mailbox (
  id            bigserial PRIMARY KEY,
  session_id    text      NOT NULL REFERENCES dsh_sessions (id),
  message_id    text      NOT NULL,
  kind          text      NOT NULL CHECK (kind IN ('send', 'inject')),
  target        text      CHECK (target IN ('next-turn', 'next-step')),
  wakeup        boolean   NOT NULL DEFAULT true,
  sender        text,
  message       json      NOT NULL,
  accepted_at   timestamptz NOT NULL DEFAULT now(),
  delivered_seq bigint,
  refused       text,
  UNIQUE (session_id, message_id)
);
CREATE INDEX dsh_mailbox_pending ON dsh_mailbox (session_id, id)
  WHERE delivered_seq IS NULL AND refused IS NULL;
`,
]

/** The schema version this code reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.length

const VERSION_TABLE = `CREATE TABLE IF NOT EXISTS dsh_schema_version (
  version    integer PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

/** A fixed advisory lock key serialising migrations across hosts. */
const MIGRATION_LOCK = 7_305_116_001

/**
 * Brings the database reached through `pool` up to `SCHEMA_VERSION`, applying each missing
 * migration in its own transaction under an advisory lock (concurrent callers wait, then find
 * nothing to do). Returns the versions it applied. Throws `SCHEMA_TOO_NEW` if the database is newer.
 */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect()
  const applied: number[] = []
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      await client.query(VERSION_TABLE)
      const current = await currentVersion(client)
      refuseNewer(current)
      for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
        await client.query('BEGIN')
        try {
          await client.query(MIGRATIONS[version - 1] ?? '')
          await client.query('INSERT INTO dsh_schema_version (version) VALUES ($1)', [version])
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          throw error
        }
        applied.push(version)
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    client.release()
  }
  return applied
}

/**
 * Checks that the database has exactly `SCHEMA_VERSION`. Throws `SCHEMA_OUT_OF_DATE` (run
 * `migrate`) or `SCHEMA_TOO_NEW`.
 */
export async function checkSchema(pool: pg.Pool): Promise<void> {
  const exists = await pool.query<{ found: string | null }>(
    "SELECT to_regclass('dsh_schema_version')::text AS found",
  )
  const current = exists.rows[0]?.found == null ? 0 : await currentVersion(pool)
  refuseNewer(current)
  if (current < SCHEMA_VERSION) {
    throw new PgSessionError(
      PgSessionErrorCode.SCHEMA_OUT_OF_DATE,
      `the dsh session schema is at version ${current}, this code needs ${SCHEMA_VERSION}: call migrate(pool) first`,
    )
  }
}

async function currentVersion(db: pg.Pool | pg.PoolClient): Promise<number> {
  const result = await db.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM dsh_schema_version',
  )
  return result.rows[0]?.version ?? 0
}

function refuseNewer(current: number): void {
  if (current > SCHEMA_VERSION) {
    throw new PgSessionError(
      PgSessionErrorCode.SCHEMA_TOO_NEW,
      `the dsh session schema is at version ${current}, newer than this code's ${SCHEMA_VERSION}`,
    )
  }
}
