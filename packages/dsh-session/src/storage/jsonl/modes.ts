/**
 * Who may read what the JSONL backend writes: session folders are created `0700` and files `0600`
 * unless the app widens them, and a session file others can read is found so it can be reported.
 */
import { chmod, mkdir, stat } from 'node:fs/promises'
import { HarnessError, LlmErrorCode } from 'dsh-llm'
import type { ExposedSession } from '../../types.ts'

/** The mode of session, lock and temp files the backend creates: owner read/write only. */
export const DEFAULT_FILE_MODE = 0o600
/** The mode of a session folder the backend creates: owner only. */
export const DEFAULT_DIR_MODE = 0o700

/** The resolved modes of one storage. */
export interface StorageModes {
  readonly file: number
  readonly dir: number
}

/**
 * The modes to create with: `fileMode` (default `0o600`) and `dirMode` (default `0o700`). Throws
 * `HarnessError` `INVALID_OPTIONS` for a mode that is not an integer in `0..0o777`, a file mode
 * without owner read and write, or a folder mode without owner read, write and search.
 */
export function resolveModes(options: {
  readonly fileMode?: number
  readonly dirMode?: number
}): StorageModes {
  const file = options.fileMode ?? DEFAULT_FILE_MODE
  const dir = options.dirMode ?? DEFAULT_DIR_MODE
  check('fileMode', file, 0o600)
  check('dirMode', dir, 0o700)
  return { file, dir }
}

function check(name: string, mode: number, owner: number): void {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777 || (mode & owner) !== owner) {
    throw new HarnessError(
      LlmErrorCode.INVALID_OPTIONS,
      `JsonlStorage: ${name} must be a permission mode from 0o${owner.toString(8)} to 0o777 that keeps the owner's access, got ${String(mode)}`,
    )
  }
}

/**
 * Creates `dir` (and missing parents) if it is missing. A folder it creates gets exactly `mode`
 * (set again after creation, so the umask cannot narrow a widened mode); an existing folder is left
 * as it is.
 */
export async function makeDirectory(dir: string, mode: number): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode })
  if (created !== undefined) await chmod(dir, mode)
}

/**
 * Whether a file of `mode` can be read by people other than its owner beyond what `allowed` (the
 * storage's `fileMode`) grants: a group or world read bit the storage would not have set.
 */
export function readableByOthers(mode: number, allowed: number): boolean {
  return (mode & 0o044 & ~allowed) !== 0
}

/**
 * The session file `file` as an `ExposedSession` when others can read it (`readableByOthers`),
 * else undefined; a file that cannot be stat'ed (removed meanwhile) is not reported.
 */
export async function exposureOf(
  sessionId: string,
  file: string,
  allowed: number,
): Promise<ExposedSession | undefined> {
  const found = await stat(file).catch(() => undefined)
  if (found === undefined) return undefined
  const mode = found.mode & 0o777
  return readableByOthers(mode, allowed) ? Object.freeze({ path: file, sessionId, mode }) : undefined
}
