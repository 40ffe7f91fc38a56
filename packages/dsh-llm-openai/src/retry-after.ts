/** The provider's `Retry-After`, read defensively: a finite, bounded delay or nothing. */

/**
 * The longest wait this adapter will report, in ms (one day). A larger `Retry-After` is cut to it so
 * `retryAfterMs` is always a finite, JSON-safe number; the retry policy's `maxDelayMs` then applies.
 */
export const MAX_RETRY_AFTER_MS = 86_400_000

const DECIMAL = /^\d+(\.\d+)?$/

/**
 * How long the provider asked us to wait, in ms: `retry-after-ms` when it is a decimal number, else
 * `Retry-After` as delay-seconds (fractions allowed) or an HTTP date (a past date gives 0). Every
 * value is at most `MAX_RETRY_AFTER_MS`. `undefined` when neither header holds a usable value, so the
 * retry policy falls back to its own backoff.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim()
  if (ms !== undefined && DECIMAL.test(ms)) return bounded(Number(ms))
  const value = headers.get('retry-after')?.trim()
  if (value === undefined || value === '') return undefined
  if (DECIMAL.test(value)) return bounded(Number(value) * 1000)
  // Only an HTTP date (it names a weekday or month): `Date.parse` would also read "1e9" or "-3".
  if (!/[a-z]{3}/i.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : bounded(date - now)
}

function bounded(ms: number): number {
  if (!Number.isFinite(ms)) return MAX_RETRY_AFTER_MS
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.round(ms)))
}
