/**
 * Scenario 4b, backpressure: a producer appends 200 MB of events through a session writer whose
 * storage syncs slowly (each fdatasync stalled by a fixed delay), awaiting `ready()` before each
 * append as a bulk producer should. The writer must keep resident memory within twice its high-water
 * mark and never hold the event loop for more than a few milliseconds (batches are capped and
 * encoded in slices). Runs in a fresh process; RSS is sampled every 5 ms, loop delay at 1 ms.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { MessageId, SessionId } from 'dsh-llm'
import { JsonlStorage, nodeAppendIo, type SessionEvent, SessionWriter } from 'dsh-session'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'
import { benchHeader } from './session-events.ts'

/** What one backpressure run reports. */
export interface BackpressureResult {
  /** Peak RSS above the RSS before the first append, in MiB. */
  readonly rssGrowthMiB: number
  /** The largest event-loop delay seen, in ms. */
  readonly maxDelayMs: number
  /** The largest event-loop delay of the same process idling for one second first: the machine's noise. */
  readonly idleMaxDelayMs: number
  readonly megabytes: number
  readonly seconds: number
}

const MIB = 1024 * 1024
const EVENT_TEXT_BYTES = 48 * 1024

/** Child side: appends `totalMiB` of ~64 KiB events behind a sync stalled `stallMs` per call. */
export async function measureBackpressure(
  totalMiB: number,
  highWaterMiB: number,
  stallMs: number,
): Promise<BackpressureResult> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-backpressure-'))
  try {
    const storage = new JsonlStorage({
      dir,
      io: {
        write: nodeAppendIo.write,
        sync: async (handle) => {
          await new Promise((resolve) => setTimeout(resolve, stallMs))
          await nodeAppendIo.sync(handle)
        },
      },
    })
    const id = SessionId('backpressure')
    await storage.create(benchHeader(id))
    const writer = new SessionWriter(storage, id, 0, { highWaterMark: highWaterMiB * MIB })
    const idle = monitorEventLoopDelay({ resolution: 1 })
    idle.enable()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    idle.disable()
    const delay = monitorEventLoopDelay({ resolution: 1 })
    global.gc?.()
    const rssBefore = process.memoryUsage.rss()
    let rssPeak = rssBefore
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
    }, 5)
    delay.enable()
    const started = performance.now()
    let bytes = 0
    for (let seq = 0; bytes < totalMiB * MIB; seq++) {
      await writer.ready()
      const text = randomBytes(EVENT_TEXT_BYTES).toString('base64')
      const event = {
        type: 'user/message',
        seq,
        time: seq,
        data: {
          id: MessageId(`m${seq}`),
          role: 'user',
          content: [{ type: 'text', text }],
          source: { kind: 'user' },
        },
      } as SessionEvent
      writer.enqueue(event)
      bytes += text.length + 120
    }
    await writer.flush()
    const seconds = (performance.now() - started) / 1000
    delay.disable()
    clearInterval(sampler)
    await storage.close()
    return {
      rssGrowthMiB: (rssPeak - rssBefore) / MIB,
      maxDelayMs: delay.max / 1e6,
      idleMaxDelayMs: idle.max / 1e6,
      megabytes: bytes / MIB,
      seconds,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Parent side: `runs` fresh-process runs; rows judge the median run against the targets. */
export async function backpressureScenario(totalMiB: number, runs: number): Promise<Row[]> {
  const highWaterMiB = 16
  const stallMs = 20
  const results: BackpressureResult[] = []
  for (let r = 0; r < runs; r++) {
    results.push(
      await runInChild({ kind: 'backpressure', totalMiB, highWaterMiB, stallMs }, { exposeGc: true }),
    )
  }
  const idle = median(results.map((result) => result.idleMaxDelayMs))
  const label = `${totalMiB} MiB behind a ${stallMs} ms fdatasync, high-water mark ${highWaterMiB} MiB (idle loop max ${idle.toFixed(1)} ms)`
  return [
    row({
      id: 'backpressure-rss',
      scenario: '4 storage',
      metric: `RSS growth MiB, ${label}`,
      dsh: median(results.map((result) => result.rssGrowthMiB)),
      baselineName: 'high-water mark MiB',
      baseline: highWaterMiB,
      target: '< 2×',
      check: (ratio) => ratio < 2,
    }),
    row({
      id: 'backpressure-delay',
      scenario: '4 storage',
      metric: `largest event-loop delay ms, ${label}`,
      dsh: median(results.map((result) => result.maxDelayMs)),
      baselineName: 'budget ms',
      baseline: 20,
      target: '< 1× (20 ms)',
      check: (ratio) => ratio < 1,
    }),
  ]
}
