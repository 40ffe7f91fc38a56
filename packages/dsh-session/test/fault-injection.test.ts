/**
 * The fault-injection loop: every file-system call the JSONL storage makes over open → appends →
 * close is failed in turn (the Nth call, for every N) with EIO, ENOSPC and EACCES. After each run:
 * the failure surfaced as a typed SessionError, every acknowledged event loads, and no lease is left.
 * `DSH_FAULT_APPENDS` (default 3) sets how many flushed appends each run makes.
 */
import { readdirSync } from 'node:fs'
import { SessionId } from 'dsh-llm'
import { JsonlStorage, type Session, SessionError } from 'dsh-session'
import { describe, expect, it, vi } from 'vitest'
import { header, tempDir, userEvents } from './fixtures/events.ts'
import { mountSessions, user } from './support.ts'

const faults = vi.hoisted(() => ({ armed: false, calls: 0, failAt: 0, code: 'EIO', names: [] as string[] }))

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  const step = (name: string) => {
    if (!faults.armed) return
    faults.calls++
    faults.names.push(name)
    if (faults.calls === faults.failAt) {
      throw Object.assign(new Error(`${faults.code}: injected fault in ${name} (call ${faults.calls})`), {
        code: faults.code,
        syscall: name,
      })
    }
  }
  const wrapHandle = (handle: import('node:fs/promises').FileHandle) =>
    new Proxy(handle, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver)
        if (typeof value !== 'function') return value
        // FileHandle methods are async: an injected fault rejects, as a real one would.
        return async (...args: unknown[]) => {
          step(`handle.${String(key)}`)
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
  const wrapped: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(real)) {
    wrapped[name] =
      typeof value === 'function'
        ? async (...args: unknown[]) => {
            step(name)
            const result = await (value as (...a: unknown[]) => Promise<unknown>)(...args)
            return name === 'open' ? wrapHandle(result as import('node:fs/promises').FileHandle) : result
          }
        : value
  }
  return { ...wrapped, default: wrapped }
})

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>()
  const wrap =
    <A extends unknown[], R>(name: string, fn: (...args: A) => R) =>
    (...args: A): R => {
      if (faults.armed) {
        faults.calls++
        faults.names.push(name)
        if (faults.calls === faults.failAt) {
          throw Object.assign(new Error(`${faults.code}: injected fault in ${name} (call ${faults.calls})`), {
            code: faults.code,
            syscall: name,
          })
        }
      }
      return fn(...args)
    }
  // The callback form: an injected fault reaches the callback on a later turn, as a real one would.
  const fdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    try {
      wrap('fdatasync', () => undefined)()
    } catch (error) {
      setImmediate(() => callback(error as NodeJS.ErrnoException))
      return
    }
    real.fdatasync(fd, callback)
  }
  const wrapped = {
    ...real,
    fdatasync,
    fdatasyncSync: wrap('fdatasyncSync', real.fdatasyncSync),
    statSync: wrap('statSync', real.statSync),
    writeSync: wrap('writeSync', real.writeSync),
  }
  return { ...wrapped, default: wrapped }
})

const id = SessionId('s1')
/** The kinds of file-system call a clean run of `run` makes (so a new kind is noticed and failed too). */
const commonCalls = [
  'handle.close',
  'handle.read',
  'handle.stat',
  'handle.writeFile',
  'link',
  'open',
  'readFile',
  'stat',
  'statSync',
  'unlink',
  'writeSync',
]
/** The sync call of each mode a barrier can use (`auto` uses one or the other). */
const syncCall = { inline: 'fdatasyncSync', 'thread-pool': 'fdatasync' } as const
type Mode = keyof typeof syncCall
const appends = Number(process.env.DSH_FAULT_APPENDS ?? 3)

interface Outcome {
  readonly acknowledged: number
  readonly error?: unknown
}

/** One run: open the stored session, `appends` flushed appends of two events, close. Faults armed. */
async function run(dir: string, mode: Mode): Promise<Outcome> {
  const app = await mountSessions({ storage: new JsonlStorage({ dir, sync: mode }) })
  let session: Session | undefined
  let acknowledged = 2
  faults.armed = true
  try {
    session = await app.sessions.open(id)
    for (let i = 0; i < appends; i++) {
      session.append('user/message', user(`a${i}`))
      session.append('user/message', user(`b${i}`))
      await session.flush()
      acknowledged = session.seq
    }
    await app.sessions.close(session)
    return { acknowledged }
  } catch (error) {
    faults.armed = false
    // The session must still close (typed if it fails) and leave no lease.
    if (session !== undefined) {
      await app.sessions.close(session).catch((closeError: unknown) => {
        expect(closeError).toBeInstanceOf(SessionError)
      })
    }
    return { acknowledged, error }
  } finally {
    faults.armed = false
  }
}

async function seed(dir: string): Promise<void> {
  const storage = new JsonlStorage({ dir })
  await storage.create(header('s1'))
  await storage.appendBatch(id, userEvents(0, 2), 0)
  await storage.close()
}

describe.each(Object.keys(syncCall) as Mode[])(
  'fault injection over open → appends → close, %s sync',
  (mode) => {
    it('fails each file-system call in turn with EIO, ENOSPC and EACCES: typed errors, nothing acknowledged lost, no lease left', async () => {
      const expectedCalls = [...commonCalls, syncCall[mode]]
      const clean = tempDir()
      await seed(clean.dir)
      faults.calls = 0
      faults.failAt = 0
      faults.names = []
      const baseline = await run(clean.dir, mode)
      clean.dispose()
      expect(baseline.error).toBeUndefined()
      const total = faults.calls
      // Every kind of call the path makes is among those failed: lock, create, write, sync, close.
      expect(new Set(faults.names)).toEqual(new Set(expectedCalls))
      const expectedIds = Array.from({ length: appends }, (_, i) => [`a${i}`, `b${i}`]).flat()
      const seen = new Set<string>()
      for (const code of ['EIO', 'ENOSPC', 'EACCES']) {
        for (let n = 1; n <= total; n++) {
          const { dir, dispose } = tempDir()
          try {
            await seed(dir)
            faults.calls = 0
            faults.failAt = n
            faults.code = code
            faults.names = []
            const outcome = await run(dir, mode)
            const where = `${code} at call ${n} (${faults.names[n - 1] ?? 'none'})`
            if (outcome.error !== undefined) {
              expect(outcome.error, where).toBeInstanceOf(SessionError)
              seen.add((outcome.error as SessionError).code)
            }
            // No lease is left: another storage takes it, and every acknowledged event loads.
            const after = new JsonlStorage({ dir })
            await after.acquire(id)
            const loaded = await after.load(id)
            expect(loaded.events.length, where).toBeGreaterThanOrEqual(outcome.acknowledged)
            expect(loaded.events.slice(0, 2), where).toEqual(userEvents(0, 2))
            const ids = loaded.events
              .slice(2, outcome.acknowledged)
              .map((event) => (event.data as { id: string }).id)
            expect(ids, where).toEqual(expectedIds.slice(0, outcome.acknowledged - 2))
            await after.close()
            expect(
              readdirSync(dir).filter((name) => name.endsWith('.lock')),
              where,
            ).toEqual([])
          } finally {
            dispose()
          }
        }
      }
      expect([...seen].sort()).toEqual(expect.arrayContaining(['STORAGE']))
    }, 120_000)
  },
)
