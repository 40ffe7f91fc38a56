#!/usr/bin/env node
/**
 * `dsh-invariants check <file.jsonl>...` — exit 0 when every file is clean; 1 with one line per
 * violation (`file:line seq N [check] message`); 2 when a file cannot be read or is corrupt.
 * `dsh-invariants requests <file.jsonl>` — the re-derived requests, one JSON line each.
 */
import { SessionId } from 'dsh-llm'
import { checkSessionLog } from './offline.ts'
import { reconstructRequests } from './reconstruct.ts'
import { eventLine, type RecordedLog, readRecordedLog } from './recorded-log.ts'

const USAGE = `usage:
  dsh-invariants check <file.jsonl>...   check recorded session logs (exit 0 clean, 1 violations, 2 unreadable)
  dsh-invariants requests <file.jsonl>   print every request the log implies, one JSON line each`

function read(file: string): RecordedLog | undefined {
  try {
    return readRecordedLog(file)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    process.stderr.write(
      `${error instanceof Error ? error.message : String(error)}${typeof code === 'string' ? ` (${code})` : ''}\n`,
    )
    return undefined
  }
}

function check(files: readonly string[]): number {
  let status = 0
  for (const file of files) {
    const log = read(file)
    if (log === undefined) {
      status = 2
      continue
    }
    const violations = checkSessionLog(log.events, { parent: log.header.parent ?? null })
    for (const violation of violations) {
      const line = violation.index === undefined ? file : `${file}:${eventLine(violation.index)}`
      const seq = violation.seq === undefined ? '' : ` seq ${violation.seq}`
      process.stdout.write(`${line}${seq} [${violation.check}] ${violation.message}\n`)
    }
    if (violations.length > 0 && status === 0) status = 1
  }
  return status
}

function requests(file: string): number {
  const log = read(file)
  if (log === undefined) return 2
  const lines: string[] = []
  for (const request of reconstructRequests(log.events, SessionId(log.header.sessionId))) {
    lines.push(JSON.stringify(request))
  }
  process.stdout.write(lines.length === 0 ? '' : `${lines.join('\n')}\n`)
  return 0
}

function main(argv: readonly string[]): number {
  const [command, ...files] = argv
  if (command === 'check' && files.length > 0) return check(files)
  if (command === 'requests' && files.length === 1 && files[0] !== undefined) return requests(files[0])
  process.stderr.write(`${USAGE}\n`)
  return 2
}

// A reader that stops early (`dsh-invariants requests f.jsonl | head`) closes the pipe: that is not
// an error of the check, so stop writing quietly instead of crashing on EPIPE.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
})

process.exitCode = main(process.argv.slice(2))
