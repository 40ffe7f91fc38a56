/**
 * Runs the built CLI as a subprocess. It needs a fresh build of dsh-llm, dsh-session and dsh-invariants:
 * `npx --yes pnpm@12.4.2 -F dsh-llm -F dsh-session -F dsh-invariants build` (the root `pnpm test` does).
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packages = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const CLI = join(packages, 'dsh-invariants', 'dist', 'cli.js')

/** Newest modification time under `dir` (recursively), in ms. */
function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

/** Oldest modification time of the `.js` files directly in `dir`, in ms (0 when there are none). */
function oldestJs(dir: string): number {
  const times = readdirSync(dir)
    .filter((name) => name.endsWith('.js'))
    .map((name) => statSync(join(dir, name)).mtimeMs)
  return times.length === 0 ? 0 : Math.min(...times)
}

/** Throws, saying how to build, unless each package's `dist` is newer than its `src`. */
export function requireFreshBuild(): void {
  for (const name of ['dsh-llm', 'dsh-session', 'dsh-invariants']) {
    let built = 0
    try {
      built = oldestJs(join(packages, name, 'dist'))
    } catch {
      built = 0
    }
    if (built < newest(join(packages, name, 'src'))) {
      throw new Error(
        `${name}/dist is missing or older than its src; build first: npx --yes pnpm@12.4.2 -F dsh-llm -F dsh-session -F dsh-invariants build`,
      )
    }
  }
}

/** Runs `dsh-invariants ...args`; returns its exit status and output. */
export function run(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}
