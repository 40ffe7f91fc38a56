/**
 * Reading a stored session back: its header, its events in pages of `pageSize` rows, and the
 * session list in pages ordered by creation time, with a cursor from one page to the next.
 */
import type { SessionId } from 'dsh-llm'
import {
  SessionError,
  SessionErrorCode,
  type SessionEvent,
  type SessionFileHeader,
  type SessionListing,
  type StorageProblem,
} from 'dsh-session'
import type pg from 'pg'
import { decodeEvent, HEADER_COLUMNS, headerOf, type SessionRow } from './decode.ts'

/** A page of session headers (and unreadable rows), and the cursor for the next page (absent on the last). */
export interface HeaderPage extends SessionListing {
  readonly next?: string
}

// Qualified columns: the selected text aliases must not be what sorts and compares.
const LIST_SQL = `SELECT ${HEADER_COLUMNS} FROM dsh_sessions s
WHERE ($1::bigint IS NULL OR (s.created_at, s.id) > ($1::bigint, $2::text))
ORDER BY s.created_at, s.id LIMIT $3`

/** The header of `sessionId`; throws `NOT_FOUND` when no such session is stored. */
export async function readHeader(pool: pg.Pool, sessionId: SessionId): Promise<SessionFileHeader> {
  const found = await pool.query<SessionRow>(`SELECT ${HEADER_COLUMNS} FROM dsh_sessions WHERE id = $1`, [
    sessionId,
  ])
  const row = found.rows[0]
  if (row === undefined) {
    throw new SessionError(SessionErrorCode.NOT_FOUND, `no stored session ${sessionId}`, { sessionId })
  }
  return headerOf(row)
}

/**
 * Yields the events of `sessionId` with seq ≥ `fromSeq`, one page of `pageSize` rows in memory at a
 * time; throws `NOT_FOUND` when the first page is empty because the session does not exist.
 */
export async function* readEvents(
  pool: pg.Pool,
  sessionId: SessionId,
  fromSeq: number,
  pageSize: number,
): AsyncIterable<SessionEvent> {
  let next = Math.max(0, fromSeq)
  let first = true
  for (;;) {
    const page = await pool.query<{ body: unknown }>(
      'SELECT body FROM dsh_events WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3',
      [sessionId, next, pageSize],
    )
    if (first && page.rows.length === 0) await readHeader(pool, sessionId)
    first = false
    for (const row of page.rows) {
      yield decodeEvent(sessionId, row.body, next)
      next++
    }
    if (page.rows.length < pageSize) return
  }
}

/** Every page `listPage` gives, from the first to the one without `next`, joined into one listing. */
export async function listAll(listPage: (cursor?: string) => Promise<HeaderPage>): Promise<SessionListing> {
  const sessions: SessionFileHeader[] = []
  const problems: StorageProblem[] = []
  let cursor: string | undefined
  do {
    const page = await listPage(cursor)
    sessions.push(...page.sessions)
    problems.push(...page.problems)
    cursor = page.next
  } while (cursor !== undefined)
  return { sessions, problems }
}

/**
 * Up to `limit` headers (oldest first) after `cursor` (a previous page's `next`); a row this code
 * cannot read (a newer format version) becomes a problem located at `dsh_sessions/<id>`.
 */
export async function listHeaderPage(
  pool: pg.Pool,
  cursor: string | undefined,
  limit: number,
): Promise<HeaderPage> {
  let after: [string | null, string | null] = [null, null]
  if (cursor !== undefined) {
    const split = cursor.indexOf(':')
    after = [cursor.slice(0, split), cursor.slice(split + 1)]
  }
  const rows = await pool.query<SessionRow>(LIST_SQL, [after[0], after[1], limit])
  const sessions: SessionFileHeader[] = []
  const problems: StorageProblem[] = []
  for (const row of rows.rows) {
    try {
      sessions.push(headerOf(row))
    } catch (error) {
      if (!(error instanceof SessionError)) throw error
      problems.push({ path: `dsh_sessions/${row.id}`, sessionId: row.id, reason: error.message, error })
    }
  }
  const last = rows.rows[rows.rows.length - 1]
  if (last === undefined || rows.rows.length < limit) return { sessions, problems }
  return { sessions, problems, next: `${last.created_at}:${last.id}` }
}
