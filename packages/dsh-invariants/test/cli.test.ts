/**
 * The CLI as a subprocess over real session files. Runs the built `dist/cli.js`: build first with
 * `npx --yes pnpm@12.4.2 -F dsh-llm -F dsh-session -F dsh-invariants build` (the root `pnpm test` does).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { textResponse } from 'dsh-llm/testing'
import { JsonlStorage } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, requireFreshBuild, run } from './cli-run.ts'
import { READ_TURN_SCRIPT, recordReadTurn, scriptedSession } from './scripted.ts'

installInvariantGuard()

let dir: string
let clean: string
let seen: unknown[]

beforeAll(async () => {
  requireFreshBuild()
  dir = mkdtempSync(join(tmpdir(), 'dsh-invariants-cli-'))
  const { app, adapter, session, driver } = await scriptedSession(READ_TURN_SCRIPT, 'recorded', {
    sessions: { storage: new JsonlStorage({ dir }) },
  })
  await recordReadTurn(driver)
  await app.sessions.close(session)
  clean = join(dir, 'recorded.jsonl')
  seen = [...adapter.requests]
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** The clean file's lines (header first), without the final newline. */
function lines(): string[] {
  return readFileSync(clean, 'utf8').trimEnd().split('\n')
}

/** Writes a corrupted copy from edited lines and returns its path. */
function copy(name: string, content: readonly string[], ending = '\n'): string {
  const path = join(dir, name)
  writeFileSync(path, content.join('\n') + ending)
  return path
}

/** Line `seq + 2` of the clean file with its event edited. */
function edit(seq: number, change: (event: Record<string, unknown>) => Record<string, unknown>): string[] {
  const out = lines()
  out[seq + 2 - 1] = JSON.stringify(change(JSON.parse(out[seq + 2 - 1] ?? 'null')))
  return out
}

describe('dsh-invariants check', () => {
  it('exits 0 and prints nothing for a session file the checked app recorded, without touching it', () => {
    const before = { bytes: readFileSync(clean), mtime: statSync(clean).mtimeMs }
    expect(lines()).toHaveLength(25)
    expect(run('check', clean)).toEqual({ status: 0, stdout: '', stderr: '' })
    expect(readFileSync(clean)).toEqual(before.bytes)
    expect(statSync(clean).mtimeMs).toBe(before.mtime)
  })

  it('exits 1 with file:line seq N [check] for a turn opened twice', () => {
    const out = lines()
    // Seq 1 (line 3) is turn/start; insert a second one after it and renumber what follows.
    const second = { ...JSON.parse(out[2] ?? 'null'), seq: 2, data: { turn: 2, trigger: { kind: 'queued' } } }
    const renumbered = out.slice(3).map((line) => {
      const event = JSON.parse(line)
      return JSON.stringify({ ...event, seq: event.seq + 1 })
    })
    const path = copy('twice.jsonl', [...out.slice(0, 3), JSON.stringify(second), ...renumbered])
    expect(run('check', path)).toEqual({
      status: 1,
      stdout: `${path}:4 seq 2 [log-grammar] turn/start opens turn 2 while turn 1 is still open (opened at seq 1)\n`,
      stderr: '',
    })
  })

  it('exits 1 naming every violation of a file with a dropped line', () => {
    // Drop seq 12 (tool/call c1): a seq gap, and a non-error result for a call that never started.
    const out = lines().filter((_, index) => index !== 12 + 1)
    const path = copy('dropped.jsonl', out)
    expect(run('check', path)).toEqual({
      status: 1,
      stdout:
        `${path}:14 seq 13 [log-grammar] tool/result has seq 13; expected 12 (seqs run contiguously from 0)\n` +
        `${path}:14 seq 13 [log-grammar] tool/result answers call c1, which never started (no tool/call), with a non-error result\n`,
      stderr: '',
    })
  })

  it('exits 1 for a result naming an unknown call and for a delta after finish', () => {
    const unknown = edit(13, (event) => {
      const data = event.data as {
        message: { content: [{ toolCallId: string }]; source: { callId: string } }
      }
      data.message.content[0].toolCallId = 'c9'
      data.message.source.callId = 'c9'
      return event
    })
    const path = copy('unknown-call.jsonl', unknown)
    expect(run('check', path)).toEqual({
      status: 1,
      stdout:
        `${path}:15 seq 13 [log-grammar] tool/result answers call c9, which is not a call of step 1 (no assistant/message proposed it)\n` +
        `${path}:16 seq 14 [log-grammar] step/end closes step 1 with unanswered tool call(s) c1\n`,
      stderr: '',
    })
    const late = edit(10, (event) => ({
      ...event,
      data: { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } },
    }))
    const twice = copy('usage-twice.jsonl', late)
    expect(run('check', twice)).toEqual({
      status: 1,
      stdout:
        `${twice}:12 seq 10 [stream-grammar] assistant/chunk of the model call starting at seq 4 (turn 1 step 1): chunk #6 (usage) is a second usage chunk; the first was chunk #5\n` +
        `${twice}:13 seq 11 [stream-grammar] assistant/message completes the model call starting at seq 4, but the stream ended after 7 chunk(s) without a finish chunk\n`,
      stderr: '',
    })
  })

  it('exits 2 with the storage error for an unparsable middle line, or a missing file', () => {
    const out = lines()
    out[5] = '{"type": "assistant/chunk", "seq": 5,'
    const path = copy('garbled.jsonl', out)
    expect(run('check', path)).toEqual({
      status: 2,
      stdout: '',
      stderr: `${path}:6: the line is not valid JSON (CORRUPT_LOG)\n`,
    })
    const missing = join(dir, 'missing.jsonl')
    const result = run('check', missing)
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(new RegExp(`^${missing}: cannot read: ENOENT.* \\(STORAGE\\)\\n$`))
  })

  it('exits 2 for an event that fails its schema', () => {
    const path = copy(
      'invalid.jsonl',
      edit(1, (event) => ({ ...event, data: { turn: 'one' } })),
    )
    const result = run('check', path)
    expect(result).toMatchObject({ status: 2, stdout: '' })
    expect(result.stderr).toMatch(
      new RegExp(`^${path}:3: invalid event: invalid turn/start event at seq 1: data.turn: `),
    )
  })

  it('ignores a torn final line as a storage load would', () => {
    const out = lines()
    const path = copy('torn.jsonl', [...out, '{"type":"user/mess'], '')
    expect(run('check', path)).toEqual({ status: 0, stdout: '', stderr: '' })
  })

  it('checks several files and exits with the worst status', () => {
    const out = lines()
    const bad = copy('bad.jsonl', [
      ...out.slice(0, 3),
      JSON.stringify({ ...JSON.parse(out[3] ?? 'null'), seq: 5 }),
    ])
    expect(run('check', clean, bad)).toEqual({
      status: 1,
      stdout: `${bad}:4 seq 5 [log-grammar] step/start has seq 5; expected 2 (seqs run contiguously from 0)\n`,
      stderr: '',
    })
    expect(run('check', bad, join(dir, 'nope.jsonl')).status).toBe(2)
  })

  it('prints usage and exits 2 without a command', () => {
    expect(run()).toMatchObject({ status: 2, stdout: '' })
    expect(run('frobnicate', clean).stderr).toContain('usage:\n  dsh-invariants check <file.jsonl>...')
  })
})

describe('dsh-invariants requests', () => {
  it('prints every request the log implies, one JSON line each, equal to what the model saw', () => {
    const result = run('requests', clean)
    expect(result.status).toBe(0)
    const printed = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(printed).toEqual(seen)
    expect(printed.map((request) => request.messages.length)).toEqual([1, 3])
  })

  it('stops quietly, exit 0, when its reader closes the pipe early (EPIPE)', async () => {
    // Output larger than a pipe buffer, so the writer is still writing when `head` goes away.
    const { app, session, driver } = await scriptedSession([textResponse('a'), textResponse('b')], 'long', {
      sessions: { storage: new JsonlStorage({ dir }) },
    })
    driver.user('x'.repeat(200_000), 'm-long')
    driver.startTurn()
    for (let step = 0; step < 2; step++) {
      driver.startStep()
      if (step === 0) driver.header()
      await driver.call()
      driver.endStep()
    }
    driver.endTurn()
    await app.sessions.close(session)
    const script = 'set -o pipefail; node "$0" requests "$1" | head -c 1 > /dev/null'
    const result = spawnSync('bash', ['-c', script, CLI, join(dir, 'long.jsonl')], { encoding: 'utf8' })
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
  })
})
