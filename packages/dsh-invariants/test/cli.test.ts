/**
 * The CLI as a subprocess over real session files. Runs the built `dist/cli.js`: build first with
 * `npx --yes pnpm@12.4.2 -F dsh-llm -F dsh-session -F dsh-invariants build` (the root `pnpm test` does).
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { textResponse } from 'dsh-llm/testing'
import { JsonlStorage } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, requireFreshBuild, run } from './cli-run.ts'
import {
  expandRunLinesIn,
  READ_TURN_SCRIPT,
  recordReadTurn,
  recordTextTurn,
  scriptedSession,
} from './scripted.ts'

installInvariantGuard()

let dir: string
let clean: string
let seen: unknown[]
let recordedRunLines = 0

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
  // The edits below address events by line: the recorded run lines are expanded to one event per
  // line, which format version 2 allows too (run-lines.test.ts checks files that keep them).
  recordedRunLines = expandRunLinesIn(clean)
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

/** The summary line a check prints last. */
function summary(files: number, events: number, turns: number, requests: number, violations: number): string {
  return `dsh-invariants: checked ${files} file${files === 1 ? '' : 's'}: ${events} events, ${turns} turns, ${requests} requests re-derived, ${violations} violations\n`
}

/** What the CLI says on stderr about the clean file with a torn 26th line appended. */
function tornNote(path: string): string {
  return `${path}:26: the final line is torn; skipped, as a storage load would cut it off\n`
}

describe('dsh-invariants check', () => {
  it('exits 0 with a one-line summary for a session file the checked app recorded, without touching it', () => {
    const before = { bytes: readFileSync(clean), mtime: statSync(clean).mtimeMs }
    expect(recordedRunLines).toBe(2)
    expect(lines()).toHaveLength(25)
    expect(run('check', clean)).toEqual({ status: 0, stdout: summary(1, 24, 1, 2, 0), stderr: '' })
    expect(readFileSync(clean)).toEqual(before.bytes)
    expect(statSync(clean).mtimeMs).toBe(before.mtime)
  })

  it('exits 1 naming file, line, seq, event type and check for a turn opened twice', () => {
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
      stdout:
        `${path}:4 seq 2 turn/start [log-grammar] turn/start opens turn 2 while turn 1 is still open (opened at seq 1)\n` +
        summary(1, 25, 2, 2, 1),
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
        `${path}:14 seq 13 tool/result [log-grammar] tool/result has seq 13; expected 12 (seqs run contiguously from 0)\n` +
        `${path}:14 seq 13 tool/result [log-grammar] tool/result answers call c1, which never started (no tool/call), with a non-error result\n` +
        summary(1, 23, 1, 2, 2),
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
    const found = run('check', path)
    expect(found.status).toBe(1)
    expect(found.stdout.split('\n').slice(0, 2)).toEqual([
      `${path}:15 seq 13 tool/result [log-grammar] tool/result answers call c9, which is not a call of step 1 (no assistant/message proposed it)`,
      `${path}:16 seq 14 step/end [log-grammar] step/end closes step 1 with unanswered tool call(s) c1`,
    ])
    const late = edit(10, (event) => ({
      ...event,
      data: { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } },
    }))
    const twice = copy('usage-twice.jsonl', late)
    expect(run('check', twice)).toEqual({
      status: 1,
      stdout:
        `${twice}:12 seq 10 assistant/chunk [stream-grammar] assistant/chunk of the model call starting at seq 4 (turn 1 step 1): chunk #6 (usage) is a second usage chunk; the first was chunk #5\n` +
        `${twice}:13 seq 11 assistant/message [stream-grammar] assistant/message completes the model call starting at seq 4, but the stream ended after 7 chunk(s) without a finish chunk\n` +
        summary(1, 24, 1, 2, 2),
      stderr: '',
    })
  })

  it('exits 2 with the storage error for an unparsable middle line, or a missing file', () => {
    const out = lines()
    out[5] = '{"type": "assistant/chunk", "seq": 5,'
    const path = copy('garbled.jsonl', out)
    expect(run('check', path)).toEqual({
      status: 2,
      stdout: `${summary(0, 0, 0, 0, 0).trimEnd()}, 1 unreadable\n`,
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
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(
      new RegExp(`^${path}:3: invalid event: invalid turn/start event at seq 1: data.turn: `),
    )
  })

  it('skips a torn final line as a storage load would, and says so on stderr', () => {
    const out = lines()
    const path = copy('torn.jsonl', [...out, '{"type":"user/mess'], '')
    expect(run('check', path)).toEqual({ status: 0, stdout: summary(1, 24, 1, 2, 0), stderr: tornNote(path) })
    const unparsable = copy('torn-terminated.jsonl', [...out, '{"type":"user/mess'])
    expect(run('check', unparsable)).toEqual({
      status: 0,
      stdout: summary(1, 24, 1, 2, 0),
      stderr: tornNote(unparsable),
    })
    // --json reports it in the file's entry and keeps stderr clean.
    const json = run('check', '--json', path)
    expect(json.stderr).toBe('')
    expect(JSON.parse(json.stdout).files[0]).toMatchObject({ file: path, events: 24, tornLine: 26 })
  })

  it('checks several files and directories in one call and exits with the worst status', () => {
    const out = lines()
    const nested = mkdtempSync(join(dir, 'nested-'))
    mkdirSync(join(nested, 'deeper'))
    writeFileSync(join(nested, 'deeper', 'copy.jsonl'), readFileSync(clean))
    writeFileSync(join(nested, 'notes.txt'), 'not a session')
    const bad = copy('bad.jsonl', [
      ...out.slice(0, 3),
      JSON.stringify({ ...JSON.parse(out[3] ?? 'null'), seq: 5 }),
    ])
    expect(run('check', clean, nested, bad)).toEqual({
      status: 1,
      stdout:
        `${bad}:4 seq 5 step/start [log-grammar] step/start has seq 5; expected 2 (seqs run contiguously from 0)\n` +
        summary(3, 51, 3, 4, 1),
      stderr: '',
    })
    expect(run('check', bad, join(dir, 'nope.jsonl')).status).toBe(2)
    const empty = mkdtempSync(join(dir, 'empty-'))
    // A folder with no session yet (a new repository's CI) is a clean pass with a notice.
    expect(run('check', empty)).toMatchObject({
      status: 0,
      stdout: summary(0, 0, 0, 0, 0),
      stderr: `${empty}: the directory holds no .jsonl session files yet; nothing to check there\n`,
    })
  }, 30_000)

  it('prints one JSON document with --json', () => {
    const bad = copy('bad-json.jsonl', [
      ...lines().slice(0, 3),
      JSON.stringify({ ...JSON.parse(lines()[3] ?? 'null'), seq: 5 }),
    ])
    const result = run('check', '--json', clean, bad, join(dir, 'absent.jsonl'))
    expect(result.status).toBe(2)
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({
      status: 2,
      totals: { files: 2, events: 27, turns: 2, requests: 2, violations: 1, unreadable: 1 },
      files: [
        { file: clean, sessionId: 'recorded', events: 24, turns: 1, requests: 2, violations: [] },
        {
          file: bad,
          sessionId: 'recorded',
          events: 3,
          turns: 1,
          requests: 0,
          violations: [
            {
              check: 'log-grammar',
              seq: 5,
              index: 2,
              line: 4,
              eventType: 'step/start',
              message: 'step/start has seq 5; expected 2 (seqs run contiguously from 0)',
            },
          ],
        },
        {
          file: join(dir, 'absent.jsonl'),
          error: { code: 'STORAGE', message: expect.stringMatching(/cannot read: ENOENT/) },
        },
      ],
    })
  })

  it('exits 0 for --help and --version, 2 for a usage error', () => {
    const help = run('--help')
    expect(help.status).toBe(0)
    expect(help.stdout).toContain(
      'usage:\n  dsh-invariants check [--json] [--no-progress] <file.jsonl | dir>...',
    )
    expect(help.stdout).toContain(
      'exit codes: 0 every file clean; 1 violations found; 2 usage error, or a file unreadable or corrupt',
    )
    expect(run('-h').stdout).toBe(help.stdout)
    const pkg = JSON.parse(readFileSync(join(CLI, '..', '..', 'package.json'), 'utf8'))
    expect(run('--version')).toEqual({ status: 0, stdout: `${pkg.version}\n`, stderr: '' })
    expect(run()).toMatchObject({ status: 2, stdout: '' })
    expect(run('frobnicate', clean).stderr).toContain('dsh-invariants: unknown command "frobnicate"\nusage:')
    expect(run('check', '--colour', clean)).toMatchObject({ status: 2, stdout: '' })
    expect(run('check')).toMatchObject({ status: 2, stdout: '' })
  }, 30_000)
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

  it('prints the requests before a torn final line and says on stderr that it skipped the line', () => {
    const path = copy('torn-requests.jsonl', [...lines(), '{"type":"user/mess'], '')
    const result = run('requests', path)
    expect({ status: result.status, stderr: result.stderr }).toEqual({
      status: 0,
      stderr: tornNote(path),
    })
    expect(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual(seen)
  })

  it('stops quietly, exit 0, when its reader closes the pipe early (EPIPE)', async () => {
    // Output larger than a pipe buffer, so the writer is still writing when `head` goes away.
    const { app, session, driver } = await scriptedSession([textResponse('a'), textResponse('b')], 'long', {
      sessions: { storage: new JsonlStorage({ dir }) },
    })
    await recordTextTurn(driver, 'x'.repeat(200_000), 'm-long', 2)
    await app.sessions.close(session)
    const script = 'set -o pipefail; node "$0" requests "$1" | head -c 1 > /dev/null'
    const result = spawnSync('bash', ['-c', script, CLI, join(dir, 'long.jsonl')], { encoding: 'utf8' })
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
  })
})
