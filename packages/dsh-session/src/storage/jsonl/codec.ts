/**
 * The JSONL session file format: a header line, then one event envelope per line, each line ending in
 * `\n`; from version 2 a line may also be a run line, the chunk entries of one run that one write
 * carried (`run-line.ts`). Encoding and decoding of single lines; streaming lives in `scan.ts`.
 */
import { isRecord, SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { SessionFileHeader, SessionParent } from '../../types.ts'

/**
 * The JSONL format version this code writes and the newest it reads. Version 2 adds run lines;
 * version 1 files (event lines only) read as before.
 */
export const SESSION_FORMAT_VERSION = 2

/** The `format` tag of every session file header. */
export const SESSION_FORMAT = 'dsh-session'

const NEWLINE = 0x0a

/** The header line's bytes, newline included. Absent `parent` is omitted. */
export function encodeHeader(header: SessionFileHeader): Buffer {
  const plain: Record<string, unknown> = {
    format: header.format,
    version: header.version,
    sessionId: header.sessionId,
    createdAt: header.createdAt,
  }
  if (header.parent !== undefined) {
    plain.parent = { sessionId: header.parent.sessionId, seedLength: header.parent.seedLength }
  }
  return Buffer.from(`${JSON.stringify(plain)}\n`, 'utf8')
}

/** Whether `bytes` ends with a newline (an empty buffer does not). */
export function endsWithNewline(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE
}

/**
 * Parses and checks a header line of `file` — the one header reader of the JSONL format, shared by
 * `JsonlStorage` and the invariants' offline scan. Throws `UNSUPPORTED_VERSION` for a version newer
 * than `SESSION_FORMAT_VERSION`, `CORRUPT_LOG` (line 1) for anything that is not a dsh-session header
 * (of `expectedId`, when given; without it any non-empty session id is accepted).
 */
export function decodeHeader(text: string, file: string, expectedId?: string): SessionFileHeader {
  const where = expectedId === undefined ? { file, line: 1 } : { file, line: 1, sessionId: expectedId }
  const corrupt = (why: string, cause?: unknown) =>
    new SessionError(
      SessionErrorCode.CORRUPT_LOG,
      `${file}:1: ${why}`,
      where,
      cause === undefined ? undefined : { cause },
    )
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw corrupt('the header line is not JSON', cause)
  }
  if (!isRecord(value) || value.format !== SESSION_FORMAT) throw corrupt('not a dsh-session file header')
  const { version, sessionId, createdAt, parent } = value
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw corrupt(`invalid format version ${JSON.stringify(version)}`)
  }
  if (version > SESSION_FORMAT_VERSION) {
    throw new SessionError(
      SessionErrorCode.UNSUPPORTED_VERSION,
      `${file}:1: format version ${version} is newer than this reader supports (${SESSION_FORMAT_VERSION})`,
      where,
    )
  }
  if (expectedId === undefined) {
    if (typeof sessionId !== 'string' || sessionId === '') throw corrupt('invalid sessionId')
  } else if (sessionId !== expectedId) {
    throw corrupt(`header names session ${JSON.stringify(sessionId)}, expected ${JSON.stringify(expectedId)}`)
  }
  if (typeof createdAt !== 'number' || !Number.isFinite(createdAt)) throw corrupt('invalid createdAt')
  const header: { -readonly [K in keyof SessionFileHeader]: SessionFileHeader[K] } = {
    format: SESSION_FORMAT,
    version,
    sessionId: SessionId(sessionId as string),
    createdAt,
  }
  if (parent !== undefined) header.parent = decodeParent(parent, corrupt)
  return header
}

function decodeParent(value: unknown, corrupt: (why: string) => SessionError): SessionParent {
  if (!isRecord(value)) throw corrupt('invalid parent')
  const { sessionId, seedLength } = value
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw corrupt('invalid parent.sessionId')
  if (typeof seedLength !== 'number' || !Number.isInteger(seedLength) || seedLength < 0) {
    throw corrupt('invalid parent.seedLength')
  }
  return { sessionId: SessionId(sessionId), seedLength }
}
