/**
 * Scenario 4c, barrier breakdown: what one JSONL durability barrier costs, step by step, for the
 * tool loop's pattern (~15 events per barrier). Each variant writes the same events to its own file
 * in `barriers` barriers; variants run interleaved (A B C D E, repeated) in one fresh process:
 *   floor           JSON.stringify + writeSync + fdatasyncSync on the event loop
 *   floor-pool      the same, but `await FileHandle.datasync()` (the libuv thread-pool round trip)
 *   storage-inline  `JsonlStorage.appendBatch` with an inline fdatasync (`io.sync` = fdatasyncSync)
 *   storage         `JsonlStorage.appendBatch` as shipped (thread-pool fdatasync)
 *   writer          `SessionWriter.enqueue` × n then `flush()`: the whole barrier path of a session
 * The differences are the breakdown: pool − floor is the thread-pool hop, storage − floor-pool what
 * the storage adds, writer − storage what group commit adds.
 */
import { fdatasyncSync, writeSync } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { JsonlStorage, nodeAppendIo, type SessionEvent, SessionWriter } from 'dsh-session'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'
import { benchHeader, toolLoopEvents } from './session-events.ts'

/** Closed: the variants, in the order they run. */
export const BARRIER_VARIANTS = ['floor', 'floor-pool', 'storage-inline', 'storage', 'writer'] as const
type Variant = (typeof BARRIER_VARIANTS)[number]

/** µs per barrier of each variant (median over rounds). */
export type BarrierResult = Record<Variant, number>

const PER_BARRIER = 15

/**
 * Child side: `rounds` interleaved rounds of `barriers` barriers per variant. With `disk` false every
 * sync is skipped (floor) or a resolved no-op (storage), which isolates the CPU side of a barrier:
 * encoding, checks and promise hops, free of the disk's noise.
 */
export async function measureBarriers(
  barriers: number,
  rounds: number,
  disk: boolean,
): Promise<BarrierResult> {
  const events = toolLoopEvents(barriers * PER_BARRIER)
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-barriers-'))
  const samples: Record<Variant, number[]> = {
    floor: [],
    'floor-pool': [],
    'storage-inline': [],
    storage: [],
    writer: [],
  }
  try {
    for (let round = 0; round < rounds; round++) {
      for (const variant of BARRIER_VARIANTS) {
        const elapsed = await runVariant(variant, events, join(dir, `${variant}-${round}`), disk)
        samples[variant].push((elapsed * 1000) / barriers)
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  const result = {} as Record<Variant, number>
  for (const variant of BARRIER_VARIANTS) result[variant] = median(samples[variant])
  return result
}

async function runVariant(
  variant: Variant,
  events: readonly SessionEvent[],
  name: string,
  disk: boolean,
): Promise<number> {
  if (variant === 'floor' || variant === 'floor-pool') {
    const handle = await open(`${name}.jsonl`, 'a')
    const started = performance.now()
    for (let i = 0; i < events.length; i += PER_BARRIER) {
      let text = ''
      for (let j = i; j < i + PER_BARRIER; j++) text += `${JSON.stringify(events[j])}\n`
      writeSync(handle.fd, text)
      if (!disk) continue
      if (variant === 'floor') fdatasyncSync(handle.fd)
      else await handle.datasync()
    }
    const elapsed = performance.now() - started
    await handle.close()
    return elapsed
  }
  const dir = `${name}.d`
  const io = !disk
    ? { write: nodeAppendIo.write, sync: async () => undefined }
    : variant === 'storage-inline'
      ? { write: nodeAppendIo.write, sync: async (handle: { fd: number }) => fdatasyncSync(handle.fd) }
      : nodeAppendIo
  const storage = new JsonlStorage({ dir, io })
  const id = SessionId('barriers')
  await storage.create(benchHeader(id))
  const writer = new SessionWriter(storage, id, 0)
  const started = performance.now()
  for (let i = 0; i < events.length; i += PER_BARRIER) {
    if (variant === 'writer') {
      for (let j = i; j < i + PER_BARRIER; j++) writer.enqueue(events[j] as SessionEvent)
      await writer.flush()
    } else {
      await storage.appendBatch(id, events.slice(i, i + PER_BARRIER), i)
    }
  }
  const elapsed = performance.now() - started
  await storage.close()
  return elapsed
}

/** Parent side: one row per variant after the floor, each against the inline-fdatasync floor. */
export async function barrierScenario(barriers: number, rounds: number): Promise<Row[]> {
  const rows: Row[] = []
  for (const disk of [true, false]) {
    const result = await runInChild({ kind: 'barriers', barriers, rounds, disk })
    const variants = disk ? BARRIER_VARIANTS.slice(1) : (['storage', 'writer'] as const)
    for (const variant of variants) {
      rows.push(
        row({
          id: `barrier-${variant}${disk ? '' : '-cpu'}`,
          scenario: '4 storage',
          metric: `µs per JSONL barrier (${PER_BARRIER} events), ${variant}${disk ? '' : ', sync skipped (CPU side only)'}`,
          dsh: result[variant],
          baselineName: disk ? 'floor: writeSync + fdatasyncSync' : 'floor: writeSync',
          baseline: result.floor,
        }),
      )
    }
  }
  return rows
}
