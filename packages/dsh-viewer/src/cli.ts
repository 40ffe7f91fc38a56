#!/usr/bin/env node
/** `dsh-viewer <session.jsonl> [--out page.html] [--port N] [--no-open]`. */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { loadAppBundle } from './node/bundle.ts'
import { renderPage } from './node/page.ts'
import { readViewData } from './node/read.ts'
import { serveViewer } from './node/server.ts'

const USAGE = 'usage: dsh-viewer <session.jsonl> [--out page.html] [--port N] [--no-open]'

function openInBrowser(url: string): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open'
  spawn(opener, [url], { stdio: 'ignore', detached: true })
    .on('error', () => undefined)
    .unref()
}

/** A bad command line: the problem, then the usage line, exit 2. */
function usageError(problem: string): number {
  process.stderr.write(`dsh-viewer: ${problem}\n${USAGE}\n`)
  return 2
}

/** `--port`'s value as a port number (0: any free port), or undefined when it is not one. */
function portOf(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined
  const port = Number(value)
  return port <= 65_535 ? port : undefined
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      port: { type: 'string' },
      'no-open': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  })
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const option = /'([^']+)'/.exec(error instanceof Error ? error.message : '')?.[1]
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) {
      return usageError(`unknown option ${option}`)
    }
    return usageError(error instanceof Error ? error.message : String(error))
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const file = positionals[0]
  if (file === undefined) return usageError('name one session file')
  if (positionals.length > 1) return usageError(`name one session file, not ${positionals.length}`)
  const port = values.port === undefined ? 0 : portOf(values.port)
  if (port === undefined) {
    return usageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`)
  }
  const data = readViewData(file)
  if (data.tornLine !== undefined) {
    process.stderr.write(
      `${file}:${data.tornLine}: the final line is torn; skipped, as a storage load would cut it off\n`,
    )
  }
  const page = renderPage(data, loadAppBundle())
  if (values.out !== undefined) {
    // Owner-only, like the session it shows.
    writeFileSync(values.out, page, { mode: 0o600 })
    process.stdout.write(`wrote ${values.out}\n`)
    return 0
  }
  const server = await serveViewer(page, port)
  process.stdout.write(`dsh-viewer: ${file} at ${server.url} (Ctrl-C to stop)\n`)
  if (values['no-open'] !== true && process.stdout.isTTY) openInBrowser(server.url)
  return new Promise<number>(() => undefined)
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`dsh-viewer: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
