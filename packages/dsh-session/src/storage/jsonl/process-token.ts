/**
 * Process start tokens: what tells a live process from a later one that reuses its pid. On Linux the
 * token is the boot id with the process's start time in clock ticks (`/proc/<pid>/stat` field 22);
 * elsewhere only this process has one (random), and other pids are judged by `kill(pid, 0)` alone.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'

function readBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  } catch {
    return 'no-boot-id'
  }
}

const bootId = readBootId()

/** The start token of process `pid`, or `undefined` where the platform cannot tell (no `/proc`, no such pid). */
export function startTokenOf(pid: number): string | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // Fields after the parenthesised command name (which may hold spaces): state is field 3, starttime 22.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const startTime = fields[19]
  return startTime === undefined ? undefined : `${bootId}:${startTime}`
}

/** This process's start token: stable for its life, different for any later process with its pid. */
export const ownStartToken: string = startTokenOf(process.pid) ?? `random:${randomBytes(12).toString('hex')}`
