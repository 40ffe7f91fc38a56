/**
 * Runs the built demo the way `pnpm demo` does (plain Node, from the repository root, no model
 * configured) and pins its whole transcript, then checks the session file it wrote with the
 * `dsh-invariants` CLI as a subprocess.
 * After an intended change of the demo, regenerate the expected transcript from the repository root:
 * `node examples/coding-agent/dist/main.js > examples/coding-agent/test/expected-transcript.txt`.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
const demo = fileURLToPath(new URL('../dist/main.js', import.meta.url))
const expected = fileURLToPath(new URL('./expected-transcript.txt', import.meta.url))
const cli = join(repoRoot, 'packages/dsh-invariants/dist/cli.js')
const sessionFile = join(repoRoot, '.dsh-demo/sessions/coding-agent-demo.jsonl')

function runNode(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DSH_BASE_URL', 'DSH_API_KEY', 'DSH_MODEL']) delete env[name]
  return spawnSync(process.execPath, args, { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000 })
}

describe('the coding-agent demo in scripted mode', () => {
  let run: ReturnType<typeof runNode>

  beforeAll(() => {
    run = runNode([demo])
  })

  it('prints exactly the expected transcript and exits 0', () => {
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe(readFileSync(expected, 'utf8'))
    expect(run.status).toBe(0)
  })

  it('writes a session file that `dsh-invariants check` accepts', () => {
    const check = runNode([cli, 'check', sessionFile])
    // One event per line, except a run line (format version 2), which stands for its chunks.
    const events = readFileSync(sessionFile, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(1)
      .reduce((count, line) => {
        const value = JSON.parse(line) as { run?: number; chunks?: unknown[] }
        return count + (value.run === undefined ? 1 : (value.chunks?.length ?? 0))
      }, 0)
    expect(events).toBeGreaterThan(readFileSync(sessionFile, 'utf8').trimEnd().split('\n').length - 1)
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toEqual({
      status: 0,
      stdout: expect.stringMatching(
        new RegExp(
          `^dsh-invariants: checked 1 file: ${events} events, [1-9]\\d* turns, [1-9]\\d* requests re-derived, 0 violations\\n$`,
        ),
      ),
      stderr: '',
    })
  })

  it('writes a session file whose tampering `dsh-invariants check` reports', () => {
    const lines = readFileSync(sessionFile, 'utf8').split('\n')
    const stepEnd = lines.findIndex((line) => line.includes('"type":"step/end"'))
    const tampered = join(mkdtempSync(join(tmpdir(), 'dsh-demo-')), 'tampered.jsonl')
    const removed = (JSON.parse(lines[stepEnd] as string) as { seq: number }).seq
    writeFileSync(tampered, [...lines.slice(0, stepEnd), ...lines.slice(stepEnd + 1)].join('\n'))
    const check = runNode([cli, 'check', tampered])
    expect(check.status).toBe(1)
    // Line `stepEnd + 1` now holds the event that followed the removed `step/end` (the steering claim).
    expect(check.stdout.split('\n')[0]).toBe(
      `${tampered}:${stepEnd + 1} seq ${removed + 1} agent/inbox/spliced [log-grammar] agent/inbox/spliced has seq ${removed + 1}; ` +
        `expected ${removed} (seqs run contiguously from 0)`,
    )
  })
})
