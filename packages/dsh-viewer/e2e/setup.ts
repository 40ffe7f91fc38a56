/** What the browser test needs: chromium (required, never skipped), the demo's session, the built CLI. */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { type Browser, chromium } from 'playwright-core'

const run = promisify(execFile)

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..')
/** Where screenshots and pages are kept for CI (gitignored). */
export const ARTIFACTS = join(ROOT, 'artifacts')
/** The viewer's built command. */
export const CLI = join(ROOT, 'packages/dsh-viewer/dist/cli.js')
const CHROMIUM = '/usr/bin/chromium'

/** A host name the browser resolves to 127.0.0.1, as a DNS-rebinding attacker's name would. */
export const REBOUND_HOST = 'rebound.example'

/**
 * Launches Debian's chromium headless, resolving `REBOUND_HOST` to 127.0.0.1. Throws (the test
 * fails, it does not skip) when it is missing.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the viewer's browser test needs it (apt-get install -y chromium)`,
    )
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run pnpm --filter dsh-viewer build first`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      `--host-resolver-rules=MAP ${REBOUND_HOST} 127.0.0.1`,
    ],
  })
}

/** Runs the coding-agent demo (scripted model) in a fresh folder and returns its session file. */
export async function demoSession(): Promise<string> {
  const main = join(ROOT, 'examples/coding-agent/dist/main.js')
  if (!existsSync(main))
    throw new Error(`${main} is missing: run pnpm --filter dsh-example-coding-agent build first`)
  const cwd = await mkdtemp(join(tmpdir(), 'dsh-viewer-e2e-'))
  const env = { ...process.env, DSH_BASE_URL: '', DSH_API_KEY: '', DSH_MODEL: '' }
  await run(process.execPath, [main], { cwd, env })
  return join(cwd, '.dsh-demo/sessions/coding-agent-demo.jsonl')
}

/** Writes the self-contained page for `session` to `out` with the CLI. */
export async function writePage(session: string, out: string): Promise<void> {
  await run(process.execPath, [CLI, session, '--out', out])
}
