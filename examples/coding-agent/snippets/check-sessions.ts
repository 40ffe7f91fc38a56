// Checking recorded session files from a program, as docs/invariants-in-ci.md shows it.
import { checkSessionFile } from 'dsh-invariants'

/** Checks each file in one streaming pass; prints its violations and returns how many there were. */
export async function checkSessions(files: readonly string[]): Promise<number> {
  let found = 0
  for (const file of files) {
    const result = await checkSessionFile(file)
    for (const v of result.violations) {
      console.log(`${file}:${v.line} seq ${v.seq ?? '-'} ${v.eventType} [${v.check}] ${v.message}`)
    }
    console.log(`${file}: ${result.events} events, ${result.requests} requests re-derived`)
    found += result.violations.length
  }
  return found
}
