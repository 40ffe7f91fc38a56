/**
 * The CLI's answers to bad arguments and unreadable input: a usage error exits 2 with the problem and
 * the usage line, a file it cannot read exits 1 naming the file. Runs the built `dist/cli.js` (the
 * root `pnpm test` builds first).
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js')
const USAGE = 'usage: dsh-viewer <session.jsonl> [--out page.html] [--port N] [--no-open]\n'

function run(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

it('exits 2 with the problem and the usage line for an unknown option or a missing or extra file', () => {
  expect(run('s.jsonl', '--bogus')).toEqual({
    status: 2,
    stdout: '',
    stderr: `dsh-viewer: unknown option --bogus\n${USAGE}`,
  })
  expect(run()).toEqual({ status: 2, stdout: '', stderr: `dsh-viewer: name one session file\n${USAGE}` })
  expect(run('a.jsonl', 'b.jsonl')).toEqual({
    status: 2,
    stdout: '',
    stderr: `dsh-viewer: name one session file, not 2\n${USAGE}`,
  })
  expect(run('--help')).toEqual({ status: 0, stdout: USAGE, stderr: '' })
})

it('exits 2 for a port that is not an integer from 0 to 65535, before reading the file', () => {
  for (const port of ['abc', '99999', '-1', '8.5', '']) {
    // `--port=-1`: a separate `-1` would read as an option (parseArgs refuses that on its own).
    expect(run('/nonexistent.jsonl', `--port=${port}`)).toEqual({
      status: 2,
      stdout: '',
      stderr: `dsh-viewer: --port must be an integer from 0 to 65535, got ${JSON.stringify(port)}\n${USAGE}`,
    })
  }
})

it('exits 1 naming the file it cannot read', () => {
  expect(run('/nonexistent.jsonl', '--out', '/tmp/never.html')).toEqual({
    status: 1,
    stdout: '',
    stderr:
      "dsh-viewer: /nonexistent.jsonl: cannot read: ENOENT: no such file or directory, open '/nonexistent.jsonl'\n",
  })
})
