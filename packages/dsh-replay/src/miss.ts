/** Builds the error for a request with no recording: the nearest recorded request and the differences. */
import type { CanonicalRequest, Json } from './canonical.ts'
import { formatDifference, jsonDifferences } from './diff.ts'
import { type NearestExchange, ReplayMissError } from './errors.ts'
import type { Exchange } from './fixture.ts'

const LISTED = 10

/** The recorded exchange with the fewest differing leaves from `request` (the earliest on a tie). */
export function nearestExchange(
  exchanges: readonly Exchange[],
  request: CanonicalRequest,
): NearestExchange | undefined {
  let best: NearestExchange | undefined
  exchanges.forEach((exchange, index) => {
    const differences = jsonDifferences(exchange.request as Json, request as Json)
    if (best === undefined || differences.length < best.differences.length) {
      best = { index, key: exchange.key, differences }
    }
  })
  return best
}

function describe(request: CanonicalRequest): string {
  const messages = Array.isArray(request.messages) ? request.messages.length : 0
  return `provider ${JSON.stringify(request.provider)}, model ${JSON.stringify(request.model)}, ${messages} messages`
}

/**
 * The `ReplayMissError` for call `callNumber` (1-based) of the wrapper over fixture `path`. The message
 * names the request, the nearest recorded exchange and up to ten differences, one per line.
 */
export function replayMiss(
  path: string,
  callNumber: number,
  request: CanonicalRequest,
  key: string,
  exchanges: readonly Exchange[],
): ReplayMissError {
  const nearest = nearestExchange(exchanges, request)
  const head = `replay: no recorded response for request #${callNumber} (${describe(request)}, ${key}) in ${path}`
  const lines = [head]
  if (nearest === undefined) {
    lines.push('the fixture has no exchanges')
  } else {
    lines.push(
      `nearest recorded: exchange #${nearest.index} (${nearest.key}), ${nearest.differences.length} differences:`,
    )
    for (const difference of nearest.differences.slice(0, LISTED))
      lines.push(`  ${formatDifference(difference)}`)
    if (nearest.differences.length > LISTED) lines.push(`  … and ${nearest.differences.length - LISTED} more`)
  }
  lines.push('re-record with DSH_REPLAY=record if the change is intended')
  return new ReplayMissError(
    lines.join('\n'),
    nearest === undefined ? { request, key } : { request, key, nearest },
  )
}
