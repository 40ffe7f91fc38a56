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

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      port: { type: 'string' },
      'no-open': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  })
  const file = positionals[0]
  if (values.help === true || file === undefined || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`)
    return values.help === true ? 0 : 2
  }
  const data = readViewData(file)
  if (data.tornLine !== undefined) {
    process.stderr.write(
      `${file}:${data.tornLine}: the final line is torn; skipped, as a storage load would cut it off\n`,
    )
  }
  const page = renderPage(data, loadAppBundle())
  if (values.out !== undefined) {
    writeFileSync(values.out, page)
    process.stdout.write(`wrote ${values.out}\n`)
    return 0
  }
  const server = await serveViewer(page, values.port === undefined ? 0 : Number(values.port))
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
