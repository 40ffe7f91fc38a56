/** The fleet test's host processes: spawn, read their JSON facts, signal them. */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const packages = join(here, '..', '..')

/** One fact a host printed. */
export interface Fact {
  readonly t: string
  readonly id?: string
  readonly seq?: number
  readonly type?: string
  readonly token?: string
  readonly code?: string
  readonly to?: string
  readonly messageId?: string
  readonly error?: string
  /** Which host printed it, the index of the line in that host's output, and when it was read (ms). */
  host: string
  at: number
  recv: number
}

/** A running host process and everything it printed so far. */
export interface HostProcess {
  readonly name: string
  readonly child: ChildProcess
  readonly facts: Fact[]
  readonly exited: Promise<number | null>
}

async function newest(dir: string): Promise<number> {
  let latest = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return latest
}

/** Throws unless every package the hosts import is built and no older than its sources. */
export async function assertBuilt(): Promise<void> {
  for (const name of [
    'dsh-llm',
    'dsh-session',
    'dsh-agent-loop',
    'dsh-invariants',
    'dsh-session-postgres',
    'dsh-fleet',
  ]) {
    const dist = join(packages, name, 'dist', 'index.js')
    if (!existsSync(dist) || statSync(dist).mtimeMs < (await newest(join(packages, name, 'src')))) {
      throw new Error(
        `the fleet test's host processes run the built ${name}, which is missing or older than its src/: run \`pnpm build\` first`,
      )
    }
  }
}

/** Starts a host process; resolves once it is ready. */
export async function startHostProcess(
  name: string,
  url: string,
  leaseTtlMs: number,
  ring: readonly string[],
): Promise<HostProcess> {
  const child = spawn(
    process.execPath,
    [join(here, 'fixtures', 'fleet-host.mjs'), url, name, String(leaseTtlMs), ring.join(',')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const facts: Fact[] = []
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const ready = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => {
      const fact = JSON.parse(line) as Fact
      fact.host = name
      fact.at = facts.length
      fact.recv = Date.now()
      facts.push(fact)
      if (fact.t === 'ready') resolve()
    })
    void exited.then((code) => reject(new Error(`host ${name} exited (${code}) before ready: ${stderr}`)))
  })
  await ready
  return { name, child, facts, exited }
}

/** Polls `probe` every 50 ms until it returns a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
