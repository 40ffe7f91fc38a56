/**
 * Private by default: the JSONL storage creates its folder 0700 and its files 0600, keeps them so
 * through fork and repair, can be widened on purpose, and the store warns once about a session
 * file others can read.
 */
import { appendFileSync, chmodSync, mkdtempSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { JsonlStorage } from 'dsh-session'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { mountSessions, user } from './support.ts'

const modeOf = (path: string) => statSync(path).mode & 0o777

let root: string
let previousUmask: number
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dsh-modes-'))
  // The common default: without the storage's own modes, files would be 0644 and folders 0755.
  previousUmask = process.umask(0o022)
})
afterEach(() => {
  process.umask(previousUmask)
})

/** Captures the `dsh` logger's warnings of `app` as formatted text. */
function warningsOf(app: Awaited<ReturnType<typeof mountSessions>>): string[] {
  const warnings: string[] = []
  app.logger.exporter({
    export: (message) => {
      const [format, ...args] = message.args as [string, ...unknown[]]
      warnings.push(args.reduce<string>((text, arg) => text.replace('%s', String(arg)), format))
    },
  })
  return warnings
}

describe('JSONL storage modes', () => {
  test('creates the session folder 0700 and session and lock files 0600', async () => {
    const dir = join(root, 'nested', 'sessions')
    const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
    const session = await app.sessions.create({ id: SessionId('s1') })
    session.append('user/message', user('u1'))
    await session.flush()
    expect(modeOf(dir)).toBe(0o700)
    expect(readdirSync(dir).sort()).toEqual(['s1.jsonl', 's1.lock'])
    expect(modeOf(join(dir, 's1.jsonl'))).toBe(0o600)
    expect(modeOf(join(dir, 's1.lock'))).toBe(0o600)
    await app.sessions.close(session)
  })

  test('a fork and a repaired session stay 0600', async () => {
    const dir = join(root, 'sessions')
    const storage = new JsonlStorage({ dir })
    const app = await mountSessions({ storage })
    const source = await app.sessions.create({ id: SessionId('src') })
    source.append('user/message', user('u1'))
    source.append('turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } })
    source.append('step/start', { turn: 1, step: 1 })
    await source.flush()
    const child = await app.sessions.fork(source, 1)
    await app.sessions.close(child)
    await app.sessions.close(source)
    expect(modeOf(join(dir, `${child.id}.jsonl`))).toBe(0o600)
    // A torn final line and an open turn: opening cuts the line and appends the repair closers.
    appendFileSync(join(dir, 'src.jsonl'), '{"type":"user/mess')
    const reopened = await app.sessions.open(SessionId('src'))
    expect(reopened.loadReport).toEqual({ truncatedTail: { line: 5, bytes: 18 }, repairedEvents: 2 })
    await app.sessions.close(reopened)
    expect(modeOf(join(dir, 'src.jsonl'))).toBe(0o600)
  })

  test('fileMode and dirMode widen on purpose, whatever the umask', async () => {
    process.umask(0o077)
    const dir = join(root, 'shared')
    const app = await mountSessions({ storage: new JsonlStorage({ dir, fileMode: 0o640, dirMode: 0o750 }) })
    const session = await app.sessions.create({ id: SessionId('s1') })
    expect(modeOf(dir)).toBe(0o750)
    expect(modeOf(join(dir, 's1.jsonl'))).toBe(0o640)
    await app.sessions.close(session)
    // Group read is what the app asked for: no warning about it.
    const warnings = warningsOf(app)
    await app.sessions.list()
    expect(warnings).toEqual([])
  })

  test('refuses a mode that is out of range or takes access from the owner', () => {
    for (const options of [
      { fileMode: 0o400 },
      { fileMode: 0o1777 },
      { dirMode: 0o600 },
      { fileMode: 1.5 },
    ]) {
      expect(() => new JsonlStorage({ dir: root, ...options })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS' }),
      )
    }
  })

  test('list() and open warn once about a session file others can read', async () => {
    const dir = join(root, 'sessions')
    const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
    const warnings = warningsOf(app)
    for (const id of ['open', 'wide'])
      await app.sessions.close(await app.sessions.create({ id: SessionId(id) }))
    const wide = join(dir, 'wide.jsonl')
    chmodSync(wide, 0o644)
    const listing = await app.sessions.list()
    expect(listing.exposed).toEqual([{ path: wide, sessionId: 'wide', mode: 0o644 }])
    await app.sessions.list()
    const opened = await app.sessions.open(SessionId('wide'))
    expect(opened.loadReport?.exposed).toEqual({ path: wide, sessionId: 'wide', mode: 0o644 })
    await app.sessions.close(opened)
    expect(warnings).toEqual([
      `session file ${wide} is readable by other users (mode 0644); run chmod 600 on it (sessions hold prompts, files and tool output)`,
    ])
    // Opening keeps the mode it found: the storage never changes an existing file's permissions.
    expect(modeOf(wide)).toBe(0o644)
  })
})
