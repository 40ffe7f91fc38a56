#!/usr/bin/env node
/**
 * The `dsh-invariants` command: `check` recorded session files (and directories of them) in one
 * streaming pass each, or print the `requests` a file implies. See `USAGE` for options and exit codes.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { resolvePath } from './cli/paths.ts'
import { progressFor } from './cli/progress.ts'
import { printRequests } from './cli/requests.ts'
import { checkSessionFile, type FileCheck, type FileViolation } from './offline/check-file.ts'

const USAGE = `usage:
  dsh-invariants check [--json] [--no-progress] <file.jsonl | dir>...
      check recorded session logs; a directory is searched for .jsonl files
  dsh-invariants requests <file.jsonl>
      print every request the log implies, one JSON line each
  dsh-invariants --help | --version

options:
  --json         print one JSON document with every file's counts and violations
  --no-progress  never draw the progress line (drawn on a terminal for files over 16 MiB)
  -h, --help     print this help and exit 0
  -v, --version  print the version and exit 0

a violation line reads: <file>:<line> seq <N> <event type> [<check>] <what is wrong>
exit codes: 0 every file clean; 1 violations found; 2 usage error, or a file unreadable or corrupt`

const EXIT = { clean: 0, violations: 1, unusable: 2 } as const

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: unknown
  }
  return typeof pkg.version === 'string' ? pkg.version : 'unknown'
}

function describeError(error: unknown): string {
  const code = (error as { code?: unknown }).code
  const text = error instanceof Error ? error.message : String(error)
  return `${text}${typeof code === 'string' ? ` (${code})` : ''}`
}

/** `file:line seq N type [check] message`: the one-line form of a violation. */
export function violationLine(file: string, violation: FileViolation): string {
  const seq = violation.seq === undefined ? '' : ` seq ${violation.seq}`
  return `${file}:${violation.line}${seq} ${violation.eventType} [${violation.check}] ${violation.message}`
}

interface Totals {
  files: number
  events: number
  turns: number
  requests: number
  violations: number
  unreadable: number
}

function summary(totals: Totals): string {
  const files = `${totals.files} file${totals.files === 1 ? '' : 's'}`
  const unreadable = totals.unreadable === 0 ? '' : `, ${totals.unreadable} unreadable`
  return `dsh-invariants: checked ${files}: ${totals.events} events, ${totals.turns} turns, ${totals.requests} requests re-derived, ${totals.violations} violations${unreadable}`
}

function tornLineNote(file: string, line: number): string {
  return `${file}:${line}: the final line is torn; skipped, as a storage load would cut it off`
}

async function check(paths: readonly string[], json: boolean, progress: boolean): Promise<number> {
  const totals: Totals = { files: 0, events: 0, turns: 0, requests: 0, violations: 0, unreadable: 0 }
  const results: (FileCheck | { file: string; error: { code?: string; message: string } })[] = []
  const fail = (file: string, message: string, code?: string) => {
    totals.unreadable++
    if (json) results.push({ file, error: { ...(code === undefined ? {} : { code }), message } })
    else process.stderr.write(`${message}\n`)
  }
  for (const path of paths) {
    const resolved = await resolvePath(path)
    if (resolved.kind === 'error') {
      fail(path, resolved.message, 'STORAGE')
      continue
    }
    if (resolved.notice !== undefined) process.stderr.write(`${resolved.notice}\n`)
    for (const file of resolved.files) {
      const indicator = progress && !json ? progressFor(file, process.stderr) : undefined
      try {
        const result = await checkSessionFile(
          file,
          indicator === undefined ? {} : { onProgress: indicator.onProgress },
        )
        indicator?.clear()
        totals.files++
        totals.events += result.events
        totals.turns += result.turns
        totals.requests += result.requests
        totals.violations += result.violations.length
        if (json) results.push(result)
        else {
          // Not a violation (a load would cut it off too), but the file was cut short: say where.
          if (result.tornLine !== undefined) process.stderr.write(`${tornLineNote(file, result.tornLine)}\n`)
          for (const violation of result.violations)
            process.stdout.write(`${violationLine(file, violation)}\n`)
        }
      } catch (error) {
        indicator?.clear()
        const code = (error as { code?: unknown }).code
        fail(file, describeError(error), typeof code === 'string' ? code : undefined)
      }
    }
  }
  const status = totals.unreadable > 0 ? EXIT.unusable : totals.violations > 0 ? EXIT.violations : EXIT.clean
  if (json) process.stdout.write(`${JSON.stringify({ status, totals, files: results })}\n`)
  else process.stdout.write(`${summary(totals)}\n`)
  return status
}

async function requests(file: string): Promise<number> {
  try {
    const { tornLine } = await printRequests(file, process.stdout)
    if (tornLine !== undefined) process.stderr.write(`${tornLineNote(file, tornLine)}\n`)
    return EXIT.clean
  } catch (error) {
    process.stderr.write(`${describeError(error)}\n`)
    return EXIT.unusable
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    process.stderr.write(
      `dsh-invariants: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`,
    )
    return EXIT.unusable
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`)
    return EXIT.clean
  }
  if (values.version === true) {
    process.stdout.write(`${version()}\n`)
    return EXIT.clean
  }
  const [command, ...paths] = positionals
  if (command === 'check' && paths.length > 0) {
    return check(paths, values.json === true, values['no-progress'] !== true)
  }
  if (command === 'requests' && paths.length === 1 && paths[0] !== undefined && values.json !== true) {
    return requests(paths[0])
  }
  const problem =
    command === undefined
      ? 'no command given'
      : command === 'check' || command === 'requests'
        ? `wrong arguments for ${command}`
        : `unknown command ${JSON.stringify(command)}`
  process.stderr.write(`dsh-invariants: ${problem}\n${USAGE}\n`)
  return EXIT.unusable
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean' },
      'no-progress': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  })
}

// A reader that stops early (`dsh-invariants requests f.jsonl | head`) closes the pipe: that is not
// an error of the check, so stop writing quietly instead of crashing on EPIPE.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
  process.exit(process.exitCode ?? 0)
})

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status
  },
  (error: unknown) => {
    process.stderr.write(`dsh-invariants: ${describeError(error)}\n`)
    process.exitCode = EXIT.unusable
  },
)
