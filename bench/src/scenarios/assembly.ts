/**
 * Scenario 3, assembly: one million deltas interleaved round-robin over eight blocks (text and
 * reasoning alternating), through dsh's `BlockAssembler` versus pushing each delta's string onto
 * a per-block array and joining. Both end with every block's full text materialized.
 */
import { BlockAssembler, type StreamChunk } from 'dsh-llm'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'

/** What one assembly run reports. */
export interface AssemblyResult {
  readonly nsPerDelta: number
  /** Total characters assembled: both implementations must agree. */
  readonly chars: number
}

type Delta = Extract<StreamChunk, { type: 'text-delta' | 'reasoning-delta' }>

const POOL = 16

/** The delta chunks, `POOL` per block, reused: the loop measures assembly, not allocation. */
function deltaPool(blocks: number): Delta[][] {
  return Array.from({ length: blocks }, (_, index) =>
    Array.from({ length: POOL }, (_, j): Delta => {
      const text = String.fromCharCode(97 + ((index + j) % 26))
      return index % 2 === 0 ? { type: 'text-delta', index, text } : { type: 'reasoning-delta', index, text }
    }),
  )
}

/** Child side: assembles `deltas` deltas over `blocks` blocks with `impl`. */
export function measureAssembly(impl: 'dsh' | 'join', deltas: number, blocks: number): AssemblyResult {
  const pool = deltaPool(blocks)
  const started = performance.now()
  const chars = impl === 'dsh' ? viaAssembler(pool, deltas, blocks) : viaJoin(pool, deltas, blocks)
  const elapsed = performance.now() - started
  return { nsPerDelta: (elapsed * 1e6) / deltas, chars }
}

function pick(pool: Delta[][], i: number, blocks: number): Delta {
  const delta = pool[i % blocks]?.[Math.floor(i / blocks) % POOL]
  if (delta === undefined) throw new Error(`assembly: no delta ${i}`)
  return delta
}

function viaAssembler(pool: Delta[][], deltas: number, blocks: number): number {
  const assembler = new BlockAssembler()
  for (let b = 0; b < blocks; b++) {
    assembler.push({ type: 'block-start', index: b, blockType: b % 2 === 0 ? 'text' : 'reasoning' })
  }
  for (let i = 0; i < deltas; i++) assembler.push(pick(pool, i, blocks))
  assembler.push({ type: 'finish', reason: { kind: 'stop' } })
  let chars = 0
  for (const block of assembler.blocks()) {
    if (block.type === 'text' || block.type === 'reasoning') chars += materialize(block.text)
  }
  return chars
}

function viaJoin(pool: Delta[][], deltas: number, blocks: number): number {
  const parts: string[][] = Array.from({ length: blocks }, () => [])
  for (let i = 0; i < deltas; i++) {
    const delta = pick(pool, i, blocks)
    parts[delta.index]?.push(delta.text)
  }
  let chars = 0
  for (const list of parts) chars += materialize(list.join(''))
  return chars
}

/** Reads the string's last character, which makes V8 flatten a concatenated string. */
function materialize(text: string): number {
  return text.charCodeAt(text.length - 1) > 0 ? text.length : 0
}

/** Parent side: `runs` interleaved runs of both implementations, each in a fresh process. */
export async function assemblyScenario(deltas: number, runs: number): Promise<Row[]> {
  const dsh: number[] = []
  const join: number[] = []
  for (let r = 0; r < runs; r++) {
    const a = await runInChild({ kind: 'assembly', impl: 'dsh', deltas, blocks: 8 })
    const b = await runInChild({ kind: 'assembly', impl: 'join', deltas, blocks: 8 })
    if (a.chars !== b.chars) throw new Error(`assembly: dsh built ${a.chars} chars, join ${b.chars}`)
    dsh.push(a.nsPerDelta)
    join.push(b.nsPerDelta)
  }
  return [
    row({
      id: 'assembly',
      scenario: '3 assembly',
      metric: `ns/delta, ${deltas.toLocaleString('en-US')} deltas over 8 blocks`,
      dsh: median(dsh),
      baselineName: 'push+join',
      baseline: median(join),
      target: '≤ 2×',
      check: (ratio) => ratio <= 2,
    }),
  ]
}
