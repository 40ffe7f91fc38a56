/** The record/replay adapter wrapper. */
import { type LlmAdapter, type LlmRequest, llmFailure, type StreamChunk } from 'dsh-llm'
import { canonicalRequest, requestKey } from './canonical.ts'
import type { ReplayMissError } from './errors.ts'
import { type Exchange, FIXTURE_FORMAT, readFixture, writeFixture } from './fixture.ts'
import { replayMiss } from './miss.ts'
import { type ReplayMode, resolveMode } from './mode.ts'

/** Options of `recordReplay`. */
export interface RecordReplayOptions {
  /** The fixture file (JSON). Replay reads it once, at creation; record rewrites it after each exchange. */
  readonly fixture: string
  /** The real adapter. Required to record; ignored in replay (a replay never calls a model). */
  readonly adapter?: LlmAdapter
  /** Overrides `DSH_REPLAY` (see `resolveMode`). */
  readonly mode?: ReplayMode
}

/** An adapter that records or replays, plus what it did. */
export interface RecordReplayAdapter extends LlmAdapter {
  /** The mode this wrapper runs in, resolved when it was made. */
  readonly mode: ReplayMode
  /** The exchanges recorded so far (record) or loaded (replay). */
  readonly exchanges: readonly Exchange[]
  /** Every replay miss so far, in call order. */
  readonly misses: readonly ReplayMissError[]
}

const abortedFinish: StreamChunk = Object.freeze({
  type: 'finish',
  reason: Object.freeze({ kind: 'aborted', failure: llmFailure('ABORTED', 'replay: request aborted') }),
})

/**
 * Wraps a model adapter for tests. In `record` mode every request goes to `adapter`, its chunks are
 * passed through unchanged, and once the stream ends the exchange `{key, request, chunks}` is appended
 * to the fixture file (the file starts empty: recording replaces the old fixture). In `replay` mode the
 * request's key (`requestKey(canonicalRequest(request))`) selects the recorded chunks; requests with the
 * same key get their recordings in recorded order (the last one repeats past the end). A request with
 * no recording throws `ReplayMissError` (code `REPLAY_MISS`) from the first iteration step. A replay
 * honours `request.signal`: once aborted it ends with `finish {kind: 'aborted'}`.
 * Throws `ReplayFixtureError` at creation when replaying a missing or malformed fixture, and
 * `TypeError` when recording without an adapter.
 */
export function recordReplay(options: RecordReplayOptions): RecordReplayAdapter {
  const mode = resolveMode(options.mode)
  const misses: ReplayMissError[] = []
  if (mode === 'record') {
    const inner = options.adapter
    if (inner === undefined)
      throw new TypeError(`recordReplay: recording ${options.fixture} needs an adapter`)
    const exchanges: Exchange[] = []
    writeFixture(options.fixture, { format: FIXTURE_FORMAT, exchanges })
    return {
      mode,
      exchanges,
      misses,
      stream: (request) =>
        record(inner, request, (exchange) => {
          exchanges.push(exchange)
          writeFixture(options.fixture, { format: FIXTURE_FORMAT, exchanges })
        }),
    }
  }
  const { exchanges } = readFixture(options.fixture)
  const byKey = new Map<string, Exchange[]>()
  for (const exchange of exchanges) byKey.set(exchange.key, [...(byKey.get(exchange.key) ?? []), exchange])
  const used = new Map<string, number>()
  let calls = 0
  return {
    mode,
    exchanges,
    misses,
    stream: (request) => {
      calls += 1
      const callNumber = calls
      const canonical = canonicalRequest(request)
      const key = requestKey(canonical)
      const recorded = byKey.get(key)
      if (recorded === undefined) {
        const miss = replayMiss(options.fixture, callNumber, canonical, key, exchanges)
        misses.push(miss)
        return failing(miss)
      }
      const n = used.get(key) ?? 0
      used.set(key, n + 1)
      const exchange = recorded[Math.min(n, recorded.length - 1)] as Exchange
      return play(exchange.chunks, request.signal)
    },
  }
}

async function* record(
  inner: LlmAdapter,
  request: LlmRequest,
  save: (exchange: Exchange) => void,
): AsyncIterable<StreamChunk> {
  const canonical = canonicalRequest(request)
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of inner.stream(request)) {
      chunks.push(chunk)
      yield chunk
    }
  } finally {
    save({ key: requestKey(canonical), request: canonical, chunks: JSON.parse(JSON.stringify(chunks)) })
  }
}

async function* play(
  chunks: readonly StreamChunk[],
  signal: AbortSignal | undefined,
): AsyncIterable<StreamChunk> {
  for (const chunk of chunks) {
    if (signal?.aborted === true) {
      yield abortedFinish
      return
    }
    yield chunk
  }
}

// biome-ignore lint/correctness/useYield: throws before its first chunk, as the adapter contract allows.
async function* failing(error: ReplayMissError): AsyncIterable<StreamChunk> {
  throw error
}
