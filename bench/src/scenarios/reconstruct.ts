/**
 * Scenario 8, offline request reconstruction: `reconstructRequests` over an in-memory log of tool-loop
 * steps (~11 events per request, the shape of a long coding session), at two sizes, each in a fresh
 * process. Reports the time of the call alone, the process's peak RSS (log included) and the peak
 * RSS of building the log alone, and the growth exponent of the time between the two sizes
 * (`ln(t2/t1) / ln(n2/n1)`: 1 is linear, 2 quadratic).
 */
import { type Row, row } from '../report.ts'
import { runNode } from '../spawn.ts'
import { median } from '../stats.ts'

/** Resolved from `bench/dist/` (where the bundled scenario runs). */
const INVARIANTS = new URL('../../packages/dsh-invariants/dist/index.js', import.meta.url).href
const RSS_MARK = 'BENCH-MAXRSS '
const RSS_HOOK = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\n${RSS_MARK}'+process.resourceUsage().maxRSS+'\\n'))`

/** The child: builds a log of at least `argv[1]` events; with `argv[2] === 'derive'` times the call. */
const CHILD = `
const { reconstructRequests } = await import(${JSON.stringify(INVARIANTS)})
const target = Number(process.argv[1])
const derive = process.argv[2] === 'derive'
const events = []
const add = (type, data) => events.push(Object.freeze({ type, seq: events.length, time: 1e12 + events.length, data }))
const source = { kind: 'model', provider: 'bench', model: 'scripted' }
add('user/message', { id: 'u-0', role: 'user', content: [{ type: 'text', text: 'start' }], source: { kind: 'user' } })
let turn = 0
while (events.length < target) {
  turn++
  add('turn/start', { turn, trigger: { kind: 'queued' } })
  if (turn === 1) add('request/header', { header: { config: { provider: 'bench', model: 'scripted' }, system: 'bench' }, reason: 'initial' })
  for (let step = 1; step <= 50; step++) {
    const at = { turn, step }
    const id = 'c-' + turn + '-' + step
    const call = { type: 'tool-call', id, name: 'read', arguments: '{}' }
    add('step/start', at)
    add('assistant/chunk', { ...at, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } })
    add('assistant/chunk', { ...at, chunk: { type: 'block-end', index: 0, block: call } })
    add('assistant/chunk', { ...at, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } })
    add('assistant/message', { ...at, message: { id: 'a-' + id, role: 'assistant', content: [call], source } })
    add('tool/call', { ...at, callId: id, name: 'read', arguments: '{}' })
    const result = { type: 'tool-result', toolCallId: id, content: [{ type: 'text', text: 'contents of ' + id }] }
    add('tool/result', { ...at, message: { id: 'r-' + id, role: 'user', content: [result], source: { kind: 'tool', callId: id } } })
    add('step/end', at)
  }
  add('user/message', { id: 'u-' + turn, role: 'user', content: [{ type: 'text', text: 'next' }], source: { kind: 'user' } })
  add('turn/end', { turn, reason: { kind: 'completed' } })
}
let seconds = 0
let requests = 0
if (derive) {
  const started = performance.now()
  const rebuilt = reconstructRequests(events)
  seconds = (performance.now() - started) / 1000
  requests = rebuilt.length
  if (rebuilt.at(-1).messages.length < requests) process.exit(3)
}
process.stdout.write(JSON.stringify({ events: events.length, requests, seconds }) + '\\n')
`

interface ChildRun {
  readonly events: number
  readonly requests: number
  readonly seconds: number
  readonly rssMb: number
}

async function child(size: number, derive: boolean): Promise<ChildRun> {
  const args = ['--import', RSS_HOOK, '--input-type=module', '-e', CHILD, String(size)]
  const { code, stdout, stderr } = await runNode(derive ? [...args, 'derive'] : args)
  const mark = stderr.split('\n').find((line) => line.startsWith(RSS_MARK))
  if (code !== 0 || mark === undefined) {
    throw new Error(
      `reconstruct child (${size}) exited ${code}: ${stderr.trim().split('\n').slice(-4).join(' | ')}`,
    )
  }
  const result = JSON.parse(stdout.trim()) as Omit<ChildRun, 'rssMb'>
  return { ...result, rssMb: Number(mark.slice(RSS_MARK.length)) / 1024 }
}

/** Parent side: per size, `runs` fresh processes that derive and one that only builds the log. */
export async function reconstructScenario(
  sizes: readonly [number, number],
  runs: number,
  log: (message: string) => void,
): Promise<Row[]> {
  const rows: Row[] = []
  const times: number[] = []
  for (const size of sizes) {
    const base = await child(size, false)
    const derived: ChildRun[] = []
    for (let r = 0; r < runs; r++) derived.push(await child(size, true))
    const first = derived[0] as ChildRun
    const seconds = median(derived.map((run) => run.seconds))
    const rss = median(derived.map((run) => run.rssMb))
    times.push(seconds)
    const label = first.events.toLocaleString('en-US')
    log(
      `reconstruct: ${label} events, ${first.requests} requests, ${seconds.toFixed(3)} s, ${rss.toFixed(0)} MB`,
    )
    rows.push(
      row({
        id: `reconstruct-${size}-time`,
        scenario: '8 offline reconstruction',
        metric: `reconstructRequests over ${label} events (${first.requests.toLocaleString('en-US')} requests), s`,
        dsh: seconds,
        baselineName: '2 s',
        baseline: 2,
        target: '≤ 2 s',
        check: (_ratio, dsh) => dsh <= 2,
      }),
      row({
        id: `reconstruct-${size}-rss`,
        scenario: '8 offline reconstruction',
        metric: `peak RSS with the log held, MB (the log alone: ${base.rssMb.toFixed(0)} MB)`,
        dsh: rss,
        baselineName: '300 MB',
        baseline: 300,
        target: '≤ 300 MB',
        check: (_ratio, dsh) => dsh <= 300,
      }),
    )
  }
  const [small, large] = sizes
  const exponent = Math.log((times[1] ?? 0) / (times[0] ?? 1)) / Math.log(large / small)
  rows.push(
    row({
      id: 'reconstruct-growth',
      scenario: '8 offline reconstruction',
      metric: `time growth exponent, ${small.toLocaleString('en-US')} → ${large.toLocaleString('en-US')} events`,
      dsh: exponent,
      baselineName: 'linear',
      baseline: 1,
      target: '≤ 1.2',
      check: (_ratio, dsh) => dsh <= 1.2,
    }),
  )
  return rows
}
