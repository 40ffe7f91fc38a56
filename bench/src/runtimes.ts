/**
 * The runtimes of one suite run and how their rows are told apart: the bench's own Node measures
 * every scenario against the peers that runtime runs (`peers.ts`); with `--beside <node>`, the
 * tool loop and scale also run on that Node (Node 20, with the peer releases pinned for it) in the
 * same rounds, and its rows join the same table under their own ids, without targets.
 */
import { type PeerSet, peersFor } from './peers.ts'
import type { FailedRow, Row } from './report.ts'
import { runNode } from './spawn.ts'

/** A runtime the suite measures on: its executable (absent: this process's), version and peers. */
export interface Runtime {
  readonly node?: string
  /** `process.versions.node` of that runtime, e.g. `20.20.2`. */
  readonly version: string
  readonly peers: PeerSet
}

/** This process's runtime. */
export function ownRuntime(): Runtime {
  return { version: process.versions.node, peers: peersFor() }
}

/** The runtime of the Node executable `node` (asks it for its version); rejects when it cannot run. */
export async function runtimeOf(node: string): Promise<Runtime> {
  const { code, stdout, stderr } = await runNode(['-p', 'process.versions.node'], node)
  const version = stdout.trim()
  if (code !== 0 || !/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(
      `bench: --beside ${node} did not report a Node version: ${stderr.trim() || stdout.trim()}`,
    )
  }
  return { node, version, peers: peersFor(version) }
}

/** The row id suffix of a runtime beside the bench's own: `@node20`. */
export function runtimeTag(runtime: Runtime): string {
  return `@node${runtime.version.split('.')[0]}`
}

/** One line naming a runtime and the peer releases it measured. */
export function runtimeLine(runtime: Runtime, rows: string): string {
  const { piAgentCore, ai } = runtime.peers
  return `Node ${runtime.version} with ${piAgentCore.name}@${piAgentCore.version} and ${ai.name}@${ai.version}: ${rows}.`
}

/** Names each peer baseline with its release (`pi-agent-core` → `pi-agent-core 1.6.0`). */
export function withPeerVersions(rows: readonly (Row | FailedRow)[], runtime: Runtime): (Row | FailedRow)[] {
  const names: Record<string, string> = {
    'pi-agent-core': `pi-agent-core ${runtime.peers.piAgentCore.version}`,
    'ai-sdk': `ai ${runtime.peers.ai.version}`,
  }
  return rows.map((r) => ('error' in r ? r : { ...r, baselineName: names[r.baselineName] ?? r.baselineName }))
}

/**
 * Rows measured on a runtime beside the bench's own: ids get its tag (no quick bound matches them),
 * scenarios its version, and targets are dropped (the judged targets are the own runtime's).
 */
export function besideRows(rows: readonly (Row | FailedRow)[], runtime: Runtime): (Row | FailedRow)[] {
  const tag = runtimeTag(runtime)
  return withPeerVersions(rows, runtime).map((r) => {
    const scenario = `${r.scenario}, Node ${runtime.version}`
    if ('error' in r) return { ...r, id: `${r.id}${tag}`, scenario }
    return { ...r, id: `${r.id}${tag}`, scenario, target: '', met: undefined, noisy: false }
  })
}
