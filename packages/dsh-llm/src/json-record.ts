/** The one test for "a JSON object": what every package uses on untrusted, parsed or user input. */

/**
 * True for a non-null object that is not an array (a parsed JSON object, or any object a caller
 * passes where one is expected); narrows to a read-only string-keyed record. Says nothing about the
 * prototype or the members: checks of those stay with the caller.
 */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
