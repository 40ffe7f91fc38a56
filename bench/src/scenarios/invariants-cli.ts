/**
 * Scenario 7, the offline check: generate a long, clean session file (turns of 100 tool-loop steps,
 * ~33 events a step) in a child process, then check it with the `dsh-invariants` CLI against a plain
 * streaming `JSON.parse` of the same file, both as fresh processes in the same run (A B A B). Reports
 * wall time (ratio) and the CLI's peak RSS, which must stay bounded whatever the file's length.
 */
import { createWriteStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Row, row } from '../report.ts'
import { runInChild, runNode } from '../spawn.ts'
import { median } from '../stats.ts'

const CLI = fileURLToPath(new URL('../../packages/dsh-invariants/dist/cli.js', import.meta.url))
const STEPS_PER_TURN = 100
const DELTAS = 20
const RSS_MARK = 'BENCH-MAXRSS '
const RSS_LIMIT_MB = 256
const RATIO_LIMIT = 3

/** What generating a file reports. */
export interface GenerateResult {
  readonly events: number
  readonly turns: number
  readonly bytes: number
}

const HEADER = {
  config: { provider: 'bench', model: 'scripted' },
  system: 'You are a benchmark.',
  tools: [{ name: 'read', description: 'Reads a file', parameters: { type: 'object', properties: {} } }],
}

/** Child side: writes a clean session file of at least `events` events (whole turns) to `file`. */
export async function generateSessionFile(file: string, events: number): Promise<GenerateResult> {
  const out = createWriteStream(file)
  const time = 1_796_000_000_000
  let seq = 0
  let lines: string[] = [
    JSON.stringify({ format: 'dsh-session', version: 1, sessionId: 'bench-1m', createdAt: time }),
  ]
  let bytes = 0
  const flush = async () => {
    const text = `${lines.join('\n')}\n`
    bytes += Buffer.byteLength(text)
    lines = []
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  const push = async (type: string, data: unknown) => {
    lines.push(JSON.stringify({ type, seq: seq++, time, data }))
    if (lines.length >= 2000) await flush()
  }
  let turn = 0
  while (seq < events) {
    turn++
    await push('turn/start', { turn, trigger: { kind: 'send', target: 'next-turn' } })
    for (let step = 1; step <= STEPS_PER_TURN; step++) {
      const last = step === STEPS_PER_TURN
      const at = { turn, step }
      await push('step/start', at)
      if (step === 1) {
        const text = `Turn ${turn}: run the scripted loop.`
        await push('user/message', {
          id: `u-${turn}`,
          role: 'user',
          content: [{ type: 'text', text }],
          source: { kind: 'user' },
        })
        if (turn === 1) await push('request/header', { header: HEADER, reason: 'initial' })
      }
      let text = ''
      await push('assistant/chunk', { ...at, chunk: { type: 'block-start', index: 0, blockType: 'text' } })
      for (let d = 0; d < DELTAS; d++) {
        const delta = `w${d}.${step} `
        text += delta
        await push('assistant/chunk', { ...at, chunk: { type: 'text-delta', index: 0, text: delta } })
      }
      const content: unknown[] = [{ type: 'text', text }]
      await push('assistant/chunk', { ...at, chunk: { type: 'block-end', index: 0, block: content[0] } })
      const callId = `c-${turn}-${step}`
      if (!last) {
        const call = { type: 'tool-call', id: callId, name: 'read', arguments: '{"path":"f.txt"}' }
        content.push(call)
        const chunks = [
          { type: 'block-start', index: 1, blockType: 'tool-call' },
          { type: 'tool-call-delta', index: 1, id: callId, name: 'read', argumentsDelta: '{"path":' },
          { type: 'tool-call-delta', index: 1, id: callId, argumentsDelta: '"f.txt"}' },
          { type: 'block-end', index: 1, block: call },
        ]
        for (const chunk of chunks) await push('assistant/chunk', { ...at, chunk })
      }
      const usage = { inputTokens: 100 + step, outputTokens: 20 }
      await push('assistant/chunk', { ...at, chunk: { type: 'usage', usage } })
      const reason = { kind: last ? 'stop' : 'tool-calls' }
      await push('assistant/chunk', { ...at, chunk: { type: 'finish', reason } })
      const source = { kind: 'model', provider: 'bench', model: 'scripted' }
      const message = { id: `a-${turn}-${step}`, role: 'assistant', content, source }
      await push('assistant/message', { ...at, message, usage })
      if (!last) {
        await push('tool/call', { ...at, callId, name: 'read', arguments: '{"path":"f.txt"}' })
        const result = {
          id: `r-${turn}-${step}`,
          role: 'user',
          content: [
            { type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: 'contents' }] },
          ],
          source: { kind: 'tool', callId },
        }
        await push('tool/result', { ...at, message: result })
      }
      await push('step/end', at)
    }
    await push('turn/end', { turn, reason: { kind: 'completed' } })
  }
  await flush()
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  )
  return { events: seq, turns: turn, bytes }
}

/** A plain streaming parse: 1 MiB reads, split at newlines, `JSON.parse` each line, keep nothing. */
const PARSE_ONLY = `
import { open } from 'node:fs/promises'
const handle = await open(process.argv[1], 'r')
const buffer = Buffer.allocUnsafe(1 << 20)
let carry = ''
let lines = 0
for (;;) {
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
  if (bytesRead === 0) break
  const text = carry + buffer.toString('utf8', 0, bytesRead)
  let start = 0
  for (let nl = text.indexOf('\\n'); nl >= 0; nl = text.indexOf('\\n', start)) {
    JSON.parse(text.slice(start, nl))
    lines++
    start = nl + 1
  }
  carry = text.slice(start)
}
await handle.close()
if (lines === 0) process.exit(3)
`

/** Reports the process's peak RSS (KiB) on stderr at exit; loaded with `--import`. */
const RSS_HOOK = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\n${RSS_MARK}'+process.resourceUsage().maxRSS+'\\n'))`

interface ProcessRun {
  readonly seconds: number
  readonly rssMb: number
  readonly stdout: string
}

/** Runs `node ...args` and measures its wall time and peak RSS; rejects unless it exits `expect`. */
async function measureProcess(args: readonly string[], expect: number): Promise<ProcessRun> {
  const started = performance.now()
  const { code, stdout, stderr } = await runNode(['--import', RSS_HOOK, ...args])
  const seconds = (performance.now() - started) / 1000
  const mark = stderr.split('\n').find((line) => line.startsWith(RSS_MARK))
  if (code !== expect || mark === undefined) {
    throw new Error(
      `node ${args.join(' ')} exited ${code}: ${stderr.trim().split('\n').slice(-4).join(' | ')}`,
    )
  }
  return { seconds, rssMb: Number(mark.slice(RSS_MARK.length)) / 1024, stdout }
}

/** Parent side: per size, generate one file, then interleave CLI checks and plain parses of it. */
export async function invariantsCliScenario(
  sizes: readonly number[],
  runs: number,
  dir: string,
  log: (message: string) => void,
): Promise<Row[]> {
  const rows: Row[] = []
  for (const size of sizes) {
    const file = join(dir, `invariants-${size}.jsonl`)
    const made = await runInChild({ kind: 'invariants-generate', file, events: size })
    const mb = (await stat(file)).size / 1e6
    log(`invariants CLI: ${made.events} events, ${made.turns} turns, ${mb.toFixed(0)} MB`)
    const cli = { seconds: [] as number[], rss: [] as number[] }
    const parse: number[] = []
    for (let r = 0; r < runs; r++) {
      parse.push((await measureProcess(['--input-type=module', '-e', PARSE_ONLY, file], 0)).seconds)
      const checked = await measureProcess([CLI, 'check', '--no-progress', file], 0)
      const expected = `${made.events} events, ${made.turns} turns`
      if (!checked.stdout.includes(expected) || !checked.stdout.includes(' 0 violations')) {
        throw new Error(`invariants CLI: unexpected summary ${JSON.stringify(checked.stdout)}`)
      }
      cli.seconds.push(checked.seconds)
      cli.rss.push(checked.rssMb)
    }
    const label = size.toLocaleString('en-US')
    rows.push(
      row({
        id: `invariants-cli-${size}-time`,
        scenario: '7 invariants CLI',
        metric: `check a ${label}-event file (${mb.toFixed(0)} MB), s`,
        dsh: median(cli.seconds),
        baselineName: 'streaming JSON.parse',
        baseline: median(parse),
        target: `≤ ${RATIO_LIMIT}.0×`,
        check: (ratio) => ratio <= RATIO_LIMIT,
        runs: { dsh: cli.seconds, baseline: parse },
        ratioTarget: true,
      }),
      row({
        id: `invariants-cli-${size}-rss`,
        scenario: '7 invariants CLI',
        metric: `peak RSS checking ${label} events, MB`,
        dsh: Math.max(...cli.rss),
        baselineName: 'limit',
        baseline: RSS_LIMIT_MB,
        target: `< ${RSS_LIMIT_MB} MB`,
        check: (_ratio, dsh) => dsh < RSS_LIMIT_MB,
      }),
    )
  }
  return rows
}
