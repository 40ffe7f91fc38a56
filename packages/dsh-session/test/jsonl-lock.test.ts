import { execFile, spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { SessionId } from 'dsh-llm'
import { JsonlStorage } from 'dsh-session'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bytesOf, header, tempDir, userEvents } from './fixtures/events.ts'
import { assertBuilt } from './fixtures/kill-round.mjs'

// The children run the built package (dist/); `pnpm test` builds before running vitest.
beforeAll(() => assertBuilt())

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const id = SessionId('s1')
let dir: string
let dispose: () => void
beforeEach(() => {
  ;({ dir, dispose } = tempDir())
})
afterEach(() => dispose())

describe('one writer per session across processes', () => {
  it('refuses a writer in another process before it writes a byte, and lets it in once released', async () => {
    const owner = new JsonlStorage({ dir })
    await owner.create(header('s1'))
    await owner.appendBatch(id, userEvents(0, 3), 0)
    const file = join(dir, 's1.jsonl')
    const before = bytesOf(file)
    const run = async () =>
      JSON.parse(
        (await promisify(execFile)(process.execPath, [fixture('lock-child.mjs'), dir, 's1', '3'])).stdout,
      )
    const refused = await run()
    expect(refused.code).toBe('LOCKED')
    expect(refused.message).toContain(`session s1 (${file}) is locked by pid ${process.pid} on `)
    expect(bytesOf(file)).toBe(before)

    await owner.release(id)
    expect(await run()).toEqual({ code: 'APPENDED' })
    expect((await owner.load(id)).events.map((e) => e.seq)).toEqual([0, 1, 2, 3])
  })

  it('refuses this process while a live child holds the session, and takes over once the child is killed', async () => {
    const child = spawn(process.execPath, [fixture('kill-child.mjs'), dir, 's1', 'create'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve())
      child.once('exit', () => reject(new Error('the child exited before it was ready')))
    })
    const storage = new JsonlStorage({ dir })
    const error = await storage.acquire(id).then(
      () => undefined,
      (e: { code: string; message: string }) => e,
    )
    expect(error?.code).toBe('LOCKED')
    expect(error?.message).toContain(
      `session s1 (${join(dir, 's1.jsonl')}) is locked by pid ${child.pid} on `,
    )

    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    await storage.acquire(id)
    const { events } = await storage.load(id)
    await storage.appendBatch(id, userEvents(events.length, 1), events.length)
    await storage.release(id)
  })
})
