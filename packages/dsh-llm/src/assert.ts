/**
 * Marks the end of a `switch` over a closed union: the call type-checks only when every case is
 * handled, and throws at run time if a value outside the union arrives anyway.
 */
export function assertNever(value: never, where: string): never {
  throw new TypeError(`${where}: unexpected value ${JSON.stringify(value)}`)
}
