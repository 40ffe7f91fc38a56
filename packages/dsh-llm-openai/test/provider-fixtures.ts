/**
 * The recorded-response fixture set: `fixtures/providers/<provider>/<shape>.http`, one response per
 * file. A file starts with `# key: value` lines — provider, model, shape, source (the provider
 * documentation it follows), status, each response header, and `expect` (JSON: what dsh must make of
 * it) — then a `---` line, then the response body byte for byte.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type { StreamChunk, Usage } from 'dsh-llm'
import type { Reply } from './server.ts'

/** What a fixture's response must map to. */
export interface Expected {
  readonly text?: string
  readonly reasoning?: string
  readonly toolCalls?: readonly { readonly id: string; readonly name: string; readonly arguments: string }[]
  readonly finish?: string
  readonly refusal?: string
  readonly usage?: Usage
  readonly warnings?: readonly string[]
  readonly error?: {
    readonly code: string
    readonly status?: number
    readonly providerCode?: string
    readonly requestId?: string
    readonly retryAfterMs?: number
  }
}

/** One parsed fixture file. */
export interface ProviderFixture {
  /** `<provider>/<file>`. */
  readonly name: string
  readonly provider: string
  readonly model: string
  readonly shape: string
  readonly source: string
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  readonly expect: Expected
}

const ROOT = new URL('./fixtures/providers/', import.meta.url)
const SEPARATOR = Buffer.from('\n---\n')

/** Every fixture of the set, sorted by name. */
export function loadProviderFixtures(): ProviderFixture[] {
  const out: ProviderFixture[] = []
  for (const provider of readdirSync(ROOT).sort()) {
    for (const file of readdirSync(new URL(`${provider}/`, ROOT)).sort()) {
      out.push(parseFixture(`${provider}/${file}`, readFileSync(new URL(`${provider}/${file}`, ROOT))))
    }
  }
  return out
}

function parseFixture(name: string, bytes: Buffer): ProviderFixture {
  const cut = bytes.indexOf(SEPARATOR)
  if (cut === -1) throw new Error(`fixture ${name}: no '---' line ends its header`)
  const fields = new Map<string, string>()
  const headers: Record<string, string> = {}
  for (const line of bytes.subarray(0, cut).toString('utf8').split('\n')) {
    const match = /^# ([a-z]+): (.*)$/.exec(line)
    if (match === null)
      throw new Error(`fixture ${name}: header line ${JSON.stringify(line)} is not '# key: value'`)
    const [, key = '', value = ''] = match
    if (key === 'header') {
      const colon = value.indexOf(': ')
      headers[value.slice(0, colon)] = value.slice(colon + 2)
    } else fields.set(key, value)
  }
  const field = (key: string): string => {
    const value = fields.get(key)
    if (value === undefined || value === '') throw new Error(`fixture ${name}: no '# ${key}:' line`)
    return value
  }
  return {
    name,
    provider: field('provider'),
    model: field('model'),
    shape: field('shape'),
    source: field('source'),
    status: Number(field('status')),
    headers,
    body: bytes.subarray(cut + SEPARATOR.length),
    expect: JSON.parse(field('expect')) as Expected,
  }
}

/** Write sizes the server cycles through, so reads split events, lines and UTF-8 characters anywhere. */
const WRITE_SIZES = [1, 5, 2, 17, 3, 64, 9, 256, 4, 31]

/** The fixture as a server reply written in uneven pieces (`offset` rotates the size cycle). */
export function fixtureReply(fixture: ProviderFixture, offset = 0): Reply {
  const writes: Buffer[] = []
  let at = 0
  for (let i = offset; at < fixture.body.length; i++) {
    const size = WRITE_SIZES[i % WRITE_SIZES.length] ?? 1
    writes.push(fixture.body.subarray(at, at + size))
    at += size
  }
  return { status: fixture.status, headers: fixture.headers, writes }
}

/** What a stream of chunks amounts to, in the shape of `Expected` (absent fields left out). */
export function summarize(chunks: readonly StreamChunk[], warnings: readonly string[]): Expected {
  let text = ''
  let reasoning = ''
  const toolCalls: { id: string; name: string; arguments: string }[] = []
  const out: { -readonly [K in keyof Expected]: Expected[K] } = {}
  for (const chunk of chunks) {
    if (chunk.type === 'text-delta') text += chunk.text
    else if (chunk.type === 'reasoning-delta') reasoning += chunk.text
    else if (chunk.type === 'block-end' && chunk.block.type === 'tool-call') {
      toolCalls.push({ id: chunk.block.id, name: chunk.block.name, arguments: chunk.block.arguments })
    } else if (chunk.type === 'usage') out.usage = chunk.usage
    else if (chunk.type === 'finish') {
      const reason = chunk.reason
      if (reason.kind === 'error' || reason.kind === 'aborted') {
        const { code, status, providerCode, requestId, retryAfterMs } = reason.failure
        out.error = JSON.parse(JSON.stringify({ code, status, providerCode, requestId, retryAfterMs }))
      } else {
        out.finish = reason.kind
        if (reason.kind === 'refusal') out.refusal = reason.refusal
      }
    }
  }
  if (text !== '') out.text = text
  if (reasoning !== '') out.reasoning = reasoning
  if (toolCalls.length > 0) out.toolCalls = toolCalls
  if (warnings.length > 0) out.warnings = warnings
  return out
}
