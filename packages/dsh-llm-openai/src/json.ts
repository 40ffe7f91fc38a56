/** Narrowing helpers for untrusted JSON from the provider. */

/** A parsed JSON object. */
export type JsonRecord = { readonly [key: string]: unknown }

/** `value` when it is a string, else `undefined`. */
export function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** `value` when it is a finite number, else `undefined`. */
export function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

/** Parses `text` as JSON, returning `undefined` instead of throwing when it is not JSON. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
