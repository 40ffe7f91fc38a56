/**
 * Scenario 4b, backpressure: a producer appends 200 MB of events through a session writer whose
 * storage syncs slowly (each fdatasync stalled by a fixed delay), awaiting `ready()` before each
 * append as a bulk producer should. The writer must keep resident memory within twice its high-water
 * mark and never hold the event loop for more than a few milliseconds (batches are capped and
 * encoded in slices). Runs in a fresh process; RSS is sampled every 5 ms, loop delay at 1 ms. A
 * second, unjudged producer allocates a new buffer per event, to show how much of the growth is
 * the producer's garbage rather than the writer's queue.
 *
 * The breakdown says where resident memory and delay come from: the writer's own peak of unsynced
 * bytes, the live heap above the start with the queue at its mark (after a full collection, once the
 * delay and RSS measurements are over), the heap and external memory at the RSS peak, and the
 * longest garbage-collection pause with its kind.
 */
import { randomBytes, randomFillSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
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
  /** The writer's largest unsynced-byte estimate seen, in MiB. */
  readonly unsyncedPeakMiB: number
  /** Live heap (after a full collection) above the start's, with the queue at its mark, in MiB. */
  readonly liveHeapMiB: number
  /** The writer's unsynced-byte estimate when the producer stopped (what `liveHeapMiB` holds), in MiB. */
  readonly unsyncedAtEndMiB: number
  /** Heap used above the start's at the RSS peak, in MiB (live plus not yet collected garbage). */
  readonly heapAtPeakMiB: number
  /** Heap committed (used and free pages) above the start's at the RSS peak, in MiB. */
  readonly heapTotalAtPeakMiB: number
  /** External memory (Buffers) above the start's at the RSS peak, in MiB. */
  readonly externalAtPeakMiB: number
  /** The longest garbage-collection pause, in ms, and its kind. */
  readonly gcMaxMs: number
  readonly gcMaxKind: string
  /** Anonymous resident memory (heap, malloc, buffers) above the start's at the RSS peak, in MiB (Linux). */
  readonly anonAtPeakMiB: number
  /** File-backed resident memory (the node binary's and libraries' pages first touched) above the start's at the RSS peak, in MiB (Linux). */
  readonly fileAtPeakMiB: number
}

/** Resident memory by kind from /proc/self/status, in MiB; zeros where it is not available. */
function rssParts(): { anon: number; file: number } {
  let status = ''
  try {
    status = readFileSync('/proc/self/status', 'utf8')
  } catch {
    return { anon: 0, file: 0 }
  }
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
  return { anon: kib('RssAnon'), file: kib('RssFile') }
}

const MIB = 1024 * 1024
const EVENT_TEXT_BYTES = 48 * 1024

/**
 * Child side: appends `totalMiB` of ~64 KiB events behind a sync stalled `stallMs` per call. Each
 * event's text is a new string of fresh random bytes; `producer` says where the bytes come from:
 * one buffer refilled per event (`refill`, the judged row), or a new 48 KiB buffer per event
 * (`fresh-buffer`, reported beside it: its garbage is the producer's, not the writer's).
 */
export async function measureBackpressure(
  totalMiB: number,
  highWaterMiB: number,
  stallMs: number,
  producer: 'refill' | 'fresh-buffer',
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
    const before = process.memoryUsage()
    const rssBefore = before.rss
    let rssPeak = rssBefore
    let atPeak = before
    const partsBefore = rssParts()
    let partsAtPeak = partsBefore
    let unsyncedPeak = 0
    const sampler = setInterval(() => {
      unsyncedPeak = Math.max(unsyncedPeak, writer.unsyncedBytes)
      const rss = process.memoryUsage.rss()
      if (rss > rssPeak) {
        rssPeak = rss
        atPeak = process.memoryUsage()
        partsAtPeak = rssParts()
      }
    }, 5)
    let gcMaxMs = 0
    let gcMaxKind = 'none'
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (entry.duration <= gcMaxMs) continue
        gcMaxMs = entry.duration
        gcMaxKind = gcKind((entry as { detail?: { kind?: number } }).detail?.kind)
      }
    })
    gcObserver.observe({ entryTypes: ['gc'] })
    delay.enable()
    const started = performance.now()
    let bytes = 0
    const random = Buffer.allocUnsafeSlow(EVENT_TEXT_BYTES)
    for (let seq = 0; bytes < totalMiB * MIB; seq++) {
      await writer.ready()
      const source = producer === 'refill' ? randomFillSync(random) : randomBytes(EVENT_TEXT_BYTES)
      const text = source.toString('base64')
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
    delay.disable()
    clearInterval(sampler)
    gcObserver.disconnect()
    // The producer stopped right after the queue reached its mark: what a full collection keeps now
    // is what the writer holds (plus the process's own small growth).
    const unsyncedAtEndMiB = writer.unsyncedBytes / MIB
    global.gc?.()
    const liveHeapMiB = (process.memoryUsage().heapUsed - before.heapUsed) / MIB
    await writer.flush()
    const seconds = (performance.now() - started) / 1000
    await storage.close()
    return {
      rssGrowthMiB: (rssPeak - rssBefore) / MIB,
      maxDelayMs: delay.max / 1e6,
      idleMaxDelayMs: idle.max / 1e6,
      megabytes: bytes / MIB,
      seconds,
      unsyncedPeakMiB: unsyncedPeak / MIB,
      liveHeapMiB,
      unsyncedAtEndMiB,
      heapAtPeakMiB: (atPeak.heapUsed - before.heapUsed) / MIB,
      heapTotalAtPeakMiB: (atPeak.heapTotal - before.heapTotal) / MIB,
      externalAtPeakMiB: (atPeak.external - before.external) / MIB,
      gcMaxMs,
      gcMaxKind,
      anonAtPeakMiB: partsAtPeak.anon - partsBefore.anon,
      fileAtPeakMiB: partsAtPeak.file - partsBefore.file,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function gcKind(kind: number | undefined): string {
  switch (kind) {
    case constants.NODE_PERFORMANCE_GC_MINOR:
      return 'scavenge'
    case constants.NODE_PERFORMANCE_GC_MAJOR:
      return 'mark-compact'
    case constants.NODE_PERFORMANCE_GC_INCREMENTAL:
      return 'incremental marking'
    case constants.NODE_PERFORMANCE_GC_WEAKCB:
      return 'weak callbacks'
    default:
      return 'unknown'
  }
}

/** Parent side: `runs` fresh-process runs; rows judge the median run against the targets. */
export async function backpressureScenario(totalMiB: number, runs: number): Promise<Row[]> {
  const highWaterMiB = 16
  const stallMs = 20
  const results: BackpressureResult[] = []
  const freshBuffer: BackpressureResult[] = []
  for (let r = 0; r < runs; r++) {
    // Interleaved: the judged producer, then the one that allocates a buffer per event.
    for (const producer of ['refill', 'fresh-buffer'] as const) {
      const job = { kind: 'backpressure', totalMiB, highWaterMiB, stallMs, producer } as const
      const result: BackpressureResult = await runInChild(job, { exposeGc: true })
      ;(producer === 'refill' ? results : freshBuffer).push(result)
    }
  }
  const med = (pick: (result: BackpressureResult) => number) => median(results.map(pick))
  const fixed = (value: number) => value.toFixed(1)
  const idle = med((result) => result.idleMaxDelayMs)
  const label = `${totalMiB} MiB behind a ${stallMs} ms fdatasync, high-water mark ${highWaterMiB} MiB`
  const memory = `writer's unsynced peak ${fixed(med((r) => r.unsyncedPeakMiB))} MiB; at the RSS peak heap used +${fixed(med((r) => r.heapAtPeakMiB))} MiB (live and uncollected garbage) of +${fixed(med((r) => r.heapTotalAtPeakMiB))} MiB committed, external +${fixed(med((r) => r.externalAtPeakMiB))} MiB; resident anonymous +${fixed(med((r) => r.anonAtPeakMiB))} MiB, file-backed +${fixed(med((r) => r.fileAtPeakMiB))} MiB`
  const pauses = `idle loop max ${fixed(idle)} ms; longest GC pause ${fixed(med((r) => r.gcMaxMs))} ms (${results.map((r) => r.gcMaxKind).join(', ')})`
  return [
    row({
      id: 'backpressure-rss',
      scenario: '4 storage',
      metric: `RSS growth MiB, ${label} (${memory})`,
      dsh: median(results.map((result) => result.rssGrowthMiB)),
      baselineName: 'high-water mark MiB',
      baseline: highWaterMiB,
      target: '< 2×',
      check: (ratio) => ratio < 2,
    }),
    row({
      id: 'backpressure-rss-fresh-buffer',
      scenario: '4 storage',
      metric: `RSS growth MiB, the same with a producer that allocates a new 48 KiB buffer for each event's random bytes (external +${fixed(median(freshBuffer.map((r) => r.externalAtPeakMiB)))} MiB at the RSS peak; the difference is that garbage)`,
      dsh: median(freshBuffer.map((result) => result.rssGrowthMiB)),
      baselineName: 'high-water mark MiB',
      baseline: highWaterMiB,
    }),
    row({
      id: 'backpressure-live',
      scenario: '4 storage',
      metric: `live heap growth MiB after a full GC with the queue at ${fixed(med((r) => r.unsyncedAtEndMiB))} MiB, ${label}`,
      dsh: med((result) => result.liveHeapMiB),
      baselineName: 'high-water mark MiB',
      baseline: highWaterMiB,
      target: '< 2×',
      check: (ratio) => ratio < 2,
    }),
    row({
      id: 'backpressure-delay',
      scenario: '4 storage',
      metric: `largest event-loop delay ms, ${label} (${pauses})`,
      dsh: median(results.map((result) => result.maxDelayMs)),
      baselineName: 'budget ms',
      baseline: 20,
      target: '< 1× (20 ms)',
      check: (ratio) => ratio < 1,
    }),
  ]
}
