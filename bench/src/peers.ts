/**
 * Which release of each peer a bench process measures. A runtime gets the newest release of each
 * peer that supports it: on Node ≥ 22.19 the current ones (`@earendil-works/pi-agent-core` 1.6 needs
 * 22.19, `ai@7` needs 22), on older runtimes (Node 20) the releases pinned for them
 * (`@mariozechner/pi-agent-core@0.73.1`, `ai@6`). Both sets are dev dependencies of the bench.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The oldest Node that runs the current peers: pi-agent-core 1.6's `engines` (ai@7 needs 22). */
export const CURRENT_PEERS_NODE: readonly [number, number] = [22, 19]

/** One peer release: its npm name and version. */
export interface PeerRelease {
  /** The package's own name (an aliased install reports the name it was published under). */
  readonly name: string
  readonly version: string
}

/** The peer releases a runtime measures. */
export interface PeerSet {
  readonly current: boolean
  readonly piAgentCore: PeerRelease
  readonly ai: PeerRelease
}

/** Whether Node `version` (`process.versions.node` form, `v` prefix allowed) runs the current peers. */
export function runsCurrentPeers(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number)
  const [wantMajor, wantMinor] = CURRENT_PEERS_NODE
  return major > wantMajor || (major === wantMajor && minor >= wantMinor)
}

/**
 * `node_modules/<folder>/package.json` in the nearest folder above this module that has one, as
 * Node's resolution looks (this module runs from `src/`, `dist/` or `dist/regression/`).
 */
function manifest(folder: string): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const file = join(dir, 'node_modules', folder, 'package.json')
    if (existsSync(file)) return file
    const parent = dirname(dir)
    if (parent === dir)
      throw new Error(`bench: ${folder} is not installed above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
}

function installed(folder: string): PeerRelease {
  const file = manifest(folder)
  const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown }
  if (typeof json.name !== 'string' || typeof json.version !== 'string') {
    throw new Error(`bench: ${file} has no name or version`)
  }
  return { name: json.name, version: json.version }
}

/** The peer releases Node `version` measures, read from their installed `package.json` files. */
export function peersFor(version: string = process.versions.node): PeerSet {
  const current = runsCurrentPeers(version)
  return current
    ? { current, piAgentCore: installed('@earendil-works/pi-agent-core'), ai: installed('ai-7') }
    : { current, piAgentCore: installed('@mariozechner/pi-agent-core'), ai: installed('ai') }
}

/** This runtime's pi-agent-core driver (its module is loaded only here, in the child that runs it). */
export function piAgentDriver() {
  return runsCurrentPeers() ? import('./loop/pi-agent-current.ts') : import('./loop/pi-agent.ts')
}

/** This runtime's `ai` driver. */
export function aiSdkDriver() {
  return runsCurrentPeers() ? import('./loop/ai-sdk-current.ts') : import('./loop/ai-sdk.ts')
}
