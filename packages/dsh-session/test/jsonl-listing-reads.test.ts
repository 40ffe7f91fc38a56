/**
 * How `JsonlStorage.list()` reads the session headers: inline on the event loop, in time slices,
 * while the disk answers fast (each header costs a few system calls, not four thread-pool round
 * trips); on libuv's pool with `sync: 'thread-pool'` (a disk or network file system that can
 * stall), and for the rest of a listing in `auto` once one inline read took longer than the budget.
 */
import { execFileSync } from 'node:child_process'
import fs, { symlinkSync, writeFileSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { JsonlStorage, type JsonlStorageOptions, type SessionListing } from 'dsh-session'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { header, tempDir } from './fixtures/events.ts'

let dir: string
let dispose: () => void
beforeEach(() => {
  ;({ dir, dispose } = tempDir())
})
afterEach(() => {
  vi.restoreAllMocks()
  syncBuiltinESMExports()
  dispose()
})

/** Spies on the synchronous and the promise `open`, as every importer of `node:fs` sees them. */
function spyOpens() {
  const inline = vi.spyOn(fs, 'openSync')
  const pooled = vi.spyOn(fs.promises, 'open')
  syncBuiltinESMExports()
  return { inline, pooled }
}

/** Writes `count` session files (`s0000`, ...), created 1 ms apart, newest first by name. */
function writeSessions(count: number): string[] {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const id = `s${String(i).padStart(4, '0')}`
    ids.push(id)
    writeFileSync(join(dir, `${id}.jsonl`), `${JSON.stringify(header(id, 2000 - i))}\n`, { mode: 0o600 })
  }
  return ids
}

function storage(options: Omit<JsonlStorageOptions, 'dir'> = {}): JsonlStorage {
  return new JsonlStorage({ dir, ...options })
}

/** A listing's problems with their error codes (the error objects themselves left out). */
function problemsOf(listing: SessionListing) {
  return listing.problems.map(({ path, sessionId, reason, error }) => ({
    path,
    sessionId,
    reason,
    code: error?.code,
  }))
}

/** The paths a spy was called with, in call order. */
function pathsOf(spy: { mock: { calls: unknown[][] } }): string[] {
  return spy.mock.calls.map((call) => String(call[0]))
}

describe('JsonlStorage.list() header reads', () => {
  it('reads each header inline by default: one openSync per session file, none on the pool', async () => {
    const ids = writeSessions(12)
    const opens = spyOpens()
    const listing = await storage().list()
    expect(listing).toEqual({
      sessions: [...ids].reverse().map((id, i) => header(id, 1989 + i)),
      problems: [],
    })
    expect(pathsOf(opens.inline)).toEqual(ids.map((id) => join(dir, `${id}.jsonl`)))
    expect(opens.pooled).not.toHaveBeenCalled()
  })

  it('reads a header line longer than the first read on the pool, and the others inline', async () => {
    const ids = writeSessions(3)
    const long = { ...header('long', 1), parent: { sessionId: 'p'.repeat(5000), seedLength: 3 } }
    writeFileSync(join(dir, 'long.jsonl'), `${JSON.stringify(long)}\n`, { mode: 0o600 })
    const opens = spyOpens()
    const listing = await storage().list()
    expect(listing.sessions).toEqual([
      long,
      header(ids[2] as string, 1998),
      header(ids[1] as string, 1999),
      header(ids[0] as string, 2000),
    ])
    expect(pathsOf(opens.pooled)).toEqual([join(dir, 'long.jsonl')])
    expect(pathsOf(opens.inline)).toEqual([
      join(dir, 'long.jsonl'),
      ...ids.map((id) => join(dir, `${id}.jsonl`)),
    ])
  })

  it("reads every header on libuv's pool with sync: 'thread-pool'", async () => {
    const ids = writeSessions(20)
    const opens = spyOpens()
    const listing = await storage({ sync: 'thread-pool' }).list()
    expect(listing.sessions.map((entry) => entry.sessionId)).toEqual([...ids].reverse())
    expect(opens.inline).not.toHaveBeenCalled()
    expect(pathsOf(opens.pooled).sort()).toEqual(ids.map((id) => join(dir, `${id}.jsonl`)))
  })

  /** Makes the spied `openSync` take `ms` of the event loop for the files `slow` names, then open. */
  function slowOpens(
    inline: ReturnType<typeof spyOpens>['inline'],
    real: typeof fs.openSync,
    slow: (path: string) => number,
  ) {
    inline.mockImplementation((...args: Parameters<typeof fs.openSync>) => {
      const until = performance.now() + slow(String(args[0]))
      while (performance.now() < until) {
        // a disk that takes this long to open the file
      }
      return real(...args)
    })
  }

  it('moves the rest of the listing to the pool at once after a read of 5× the budget (auto)', async () => {
    const ids = writeSessions(20)
    const real = fs.openSync
    const opens = spyOpens()
    // The budget is 2 ms: one open of 12 ms lifts the average (1/5 of it, from 0) over it.
    slowOpens(opens.inline, real, (path) => (path.endsWith(`${ids[0]}.jsonl`) ? 12 : 0))
    const listing = await storage().list()
    expect(listing.sessions.map((entry) => entry.sessionId)).toEqual([...ids].reverse())
    expect(pathsOf(opens.inline)).toEqual([join(dir, `${ids[0]}.jsonl`)])
    expect(pathsOf(opens.pooled).sort()).toEqual(ids.slice(1).map((id) => join(dir, `${id}.jsonl`)))
  })

  it('stays inline after one slow read below 5× the budget, and moves once the reads stay slow (auto)', async () => {
    const ids = writeSessions(20)
    const real = fs.openSync
    const opens = spyOpens()
    // 5 ms once (a hiccup: the average becomes 1 ms), fast for six files, then 4 ms each from s0007
    // on: the average passes 2 ms at the third slow read (s0009) on an idle machine, a read or two
    // earlier when the fast opens are slow too.
    slowOpens(opens.inline, real, (path) => {
      const n = Number(path.slice(-10, -6))
      return n === 0 ? 5 : n >= 7 ? 4 : 0
    })
    const listing = await storage().list()
    expect(listing.sessions.map((entry) => entry.sessionId)).toEqual([...ids].reverse())
    const inline = pathsOf(opens.inline)
    const files = ids.map((id) => join(dir, `${id}.jsonl`))
    expect(inline.length).toBeGreaterThanOrEqual(8)
    expect(inline.length).toBeLessThanOrEqual(10)
    expect(inline).toEqual(files.slice(0, inline.length))
    expect(pathsOf(opens.pooled).sort()).toEqual(files.slice(inline.length))
  })

  it("keeps reading inline with sync: 'inline', whatever a read takes", async () => {
    const ids = writeSessions(5)
    const real = fs.openSync
    const opens = spyOpens()
    opens.inline.mockImplementationOnce((...args: Parameters<typeof fs.openSync>) => {
      const until = performance.now() + 8
      while (performance.now() < until) {
        // slow, but this storage was told the disk never stalls
      }
      return real(...args)
    })
    await storage({ sync: 'inline' }).list()
    expect(opens.inline).toHaveBeenCalledTimes(ids.length)
    expect(opens.pooled).not.toHaveBeenCalled()
  })

  it('reports an unreadable or vanished file as a problem, as the pooled reads do', async () => {
    writeSessions(2)
    writeFileSync(join(dir, 'gone.jsonl'), '')
    const real = fs.openSync
    const opens = spyOpens()
    opens.inline.mockImplementation((...args: Parameters<typeof fs.openSync>) => {
      if (String(args[0]).endsWith('gone.jsonl')) fs.rmSync(args[0] as string)
      return real(...args)
    })
    const listing = await storage().list()
    expect(listing.sessions.map((entry) => entry.sessionId)).toEqual(['s0001', 's0000'])
    expect(problemsOf(listing)).toEqual([
      {
        path: join(dir, 'gone.jsonl'),
        sessionId: 'gone',
        reason: `session gone not found (${join(dir, 'gone.jsonl')})`,
        code: 'NOT_FOUND',
      },
    ])
  })

  for (const sync of ['auto', 'thread-pool'] as const) {
    it(`reports a named pipe or a device among the session files as a problem, without blocking on it (${sync})`, async () => {
      writeSessions(2)
      execFileSync('mkfifo', [join(dir, 'pipe.jsonl')])
      symlinkSync('/dev/zero', join(dir, 'zeros.jsonl'))
      const listing = await storage({ sync }).list()
      expect(listing.sessions.map((entry) => entry.sessionId)).toEqual(['s0001', 's0000'])
      expect(problemsOf(listing)).toEqual([
        {
          path: join(dir, 'pipe.jsonl'),
          sessionId: 'pipe',
          reason: `${join(dir, 'pipe.jsonl')} is not a regular file; a session file is one`,
          code: 'STORAGE',
        },
        {
          path: join(dir, 'zeros.jsonl'),
          sessionId: 'zeros',
          reason: `${join(dir, 'zeros.jsonl')} is not a regular file; a session file is one`,
          code: 'STORAGE',
        },
      ])
    })
  }

  it('lets the event loop run between time slices while it reads inline', async () => {
    const ids = writeSessions(3000)
    const opens = spyOpens()
    const seen: number[] = []
    const ticker = setInterval(() => seen.push(opens.inline.mock.calls.length), 0)
    try {
      const listing = await storage().list()
      expect(listing.sessions).toHaveLength(ids.length)
    } finally {
      clearInterval(ticker)
    }
    // A tick ran after some headers were read and before the last: the listing held the loop in slices.
    expect(seen.some((count) => count > 0 && count < ids.length)).toBe(true)
  })
})
