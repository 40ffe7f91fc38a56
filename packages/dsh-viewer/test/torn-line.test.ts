/**
 * A session file whose final line is torn: the viewer shows the rest, marks the line in the view
 * data (the page's header shows it) and says so on stderr. The CLI case runs the built `dist/cli.js`
 * (the root `pnpm test` builds first).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readViewData } from 'dsh-viewer'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bigSession, sessionFile } from './big-session.ts'

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js')
const events = bigSession(1, 2)
let dir: string
let torn: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-torn-'))
  torn = join(dir, 'torn.jsonl')
  // The header, every event, then a final event line cut short (no newline).
  writeFileSync(torn, `${sessionFile(events, 'torn')}{"type":"user/mess`)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('reads the events before a torn final line and names the line in the view data', () => {
  const data = readViewData(torn)
  expect(data.events).toHaveLength(events.length)
  expect(data.tornLine).toBe(events.length + 2)
  const clean = join(dir, 'clean.jsonl')
  writeFileSync(clean, sessionFile(events, 'clean'))
  expect(readViewData(clean).tornLine).toBeUndefined()
})

it('writes the page and says on stderr which line it skipped', () => {
  const out = join(dir, 'page.html')
  const result = spawnSync(process.execPath, [CLI, torn, '--out', out], { encoding: 'utf8' })
  expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
    status: 0,
    stdout: `wrote ${out}\n`,
    stderr: `${torn}:${events.length + 2}: the final line is torn; skipped, as a storage load would cut it off\n`,
  })
  expect(readFileSync(out, 'utf8')).toContain(`"tornLine":${events.length + 2}`)
})
