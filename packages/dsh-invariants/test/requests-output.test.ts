/**
 * `dsh-invariants requests` writes at its reader's pace: with a reader that takes nothing, it writes
 * the requests of one read of the file and then waits, instead of deriving the whole file into
 * memory (a 1,000,000-event file piped to `tail` grew the process past 2 GB and died with ENOBUFS).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { textResponse } from 'dsh-llm/testing'
import { JsonlStorage } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printRequests } from '../src/cli/requests.ts'
import { recordTextTurn, scriptedSession } from './scripted.ts'

installInvariantGuard()

const STEPS = 100
/** Each answer's text: the file grows ~5 KB a step, and request k carries k answers. */
const ANSWER = 'y'.repeat(5_000)

let dir: string
let file: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-invariants-requests-'))
  const script = Array.from({ length: STEPS }, () => textResponse(ANSWER))
  const { app, session, driver } = await scriptedSession(script, 'long-turn', {
    sessions: { storage: new JsonlStorage({ dir }) },
  })
  await recordTextTurn(driver, 'go', 'm-go', STEPS)
  await app.sessions.close(session)
  file = join(dir, 'long-turn.jsonl')
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** A stream that accepts writes into its buffer but completes none until `release()`. */
function heldStream(): { readonly out: Writable; readonly text: () => string; readonly release: () => void } {
  const parts: string[] = []
  const held: (() => void)[] = []
  let holding = true
  const out = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _encoding, done) {
      parts.push(chunk.toString('utf8'))
      if (holding) held.push(() => done())
      else done()
    },
  })
  return {
    out,
    text: () => parts.join(''),
    release: () => {
      holding = false
      for (const done of held.splice(0)) done()
    },
  }
}

describe('dsh-invariants requests output', () => {
  it('waits for a full output to drain before reading on, then writes every request', async () => {
    const { out, text, release } = heldStream()
    let settled = false
    const printing = printRequests(file, out).finally(() => {
      settled = true
    })
    await sleep(500)
    // Held back after the first read's requests: nowhere near the whole output (~25 MB).
    expect(settled).toBe(false)
    expect(out.writableLength).toBeGreaterThan(0)
    expect(out.writableLength).toBeLessThan(2_000_000)
    release()
    expect(await printing).toEqual({ requests: STEPS })
    const requests = text()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { messages: unknown[] })
    expect(requests.map((request) => request.messages.length)).toEqual(
      Array.from({ length: STEPS }, (_, k) => 1 + k),
    )
    expect(requests.reduce((sum, request) => sum + JSON.stringify(request).length, 0)).toBeGreaterThan(
      20_000_000,
    )
  }, 30_000)
})
