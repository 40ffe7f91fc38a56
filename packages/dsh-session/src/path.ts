/** Renders a property path the way a person reads it: `data.message.content[2]`, `data["a-b"]`. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** Joins `root` and `segments` into a readable path; numbers become `[n]`, odd keys `["k"]`. */
export function formatPath(root: string, segments: readonly PropertyKey[]): string {
  let out = root
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`
    else if (typeof segment === 'string' && IDENTIFIER.test(segment))
      out += out === '' ? segment : `.${segment}`
    else out += `[${JSON.stringify(String(segment))}]`
  }
  return out
}
