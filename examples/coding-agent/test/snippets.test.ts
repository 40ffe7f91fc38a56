/**
 * The code shown in the root README and in docs/ lives in `snippets/`, where `tsc` checks it; these
 * tests run it and check that the documents still show it verbatim.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkSessionLog, readRecordedLog } from 'dsh-invariants'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fakeFetch, sseText, sseToolCall } from './sse.ts'

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
const snippetsDir = fileURLToPath(new URL('../snippets/', import.meta.url))

/**
 * The code a document shows for `<!-- snippet: file.ts -->` (the whole file after its leading comment
 * lines) or `<!-- snippet: file.ts#name -->` (the lines between `// #region name` and `// #endregion`).
 */
function snippet(file: string, region: string | undefined): string {
  const text = readFileSync(join(snippetsDir, file), 'utf8')
  if (region === undefined) return text.replace(/^(\/\/.*\n)+/, '')
  const start = text.indexOf(`// #region ${region}\n`)
  if (start < 0) throw new Error(`snippets/${file} has no region ${region}`)
  const body = text.slice(start + `// #region ${region}\n`.length)
  return body.slice(0, body.indexOf('// #endregion'))
}

/** Every `<!-- snippet: ... -->` marker of a markdown file, with the ts block that follows it. */
function markedBlocks(markdown: string): { file: string; region: string | undefined; code: string }[] {
  const found = []
  for (const match of markdown.matchAll(
    /<!-- snippet: ([\w./-]+)(?:#([\w-]+))? -->\n```ts\n([\s\S]*?)```/g,
  )) {
    found.push({ file: match[1] ?? '', region: match[2], code: match[3] ?? '' })
  }
  return found
}

const documents = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

describe('the code shown in README.md and docs/', () => {
  it.each(documents)('%s shows its snippets verbatim', (document) => {
    const markdown = readFileSync(join(repoRoot, document), 'utf8')
    const blocks = markedBlocks(markdown)
    for (const block of blocks) {
      expect(block.code, `${document}: snippet ${block.file}#${block.region ?? ''}`).toBe(
        snippet(block.file, block.region),
      )
    }
    const markers = markdown.split('<!-- snippet:').length - 1
    expect(blocks).toHaveLength(markers)
  })

  it('README.md shows the whole README example', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
    expect(markedBlocks(readme).map((block) => block.file)).toEqual(['readme.ts'])
  })
})

describe('the README example', () => {
  const cwd = process.cwd()
  afterEach(() => {
    process.chdir(cwd)
    process.exitCode = undefined
    vi.unstubAllGlobals()
    vi.unstubAllEnvs()
    vi.restoreAllMocks()
    vi.resetModules()
  })

  /** What the example writes to stdout (streamed text), console.log and console.error. */
  function captureOutput(): { printed: string[]; logged: string[]; errors: string[] } {
    const out = { printed: [] as string[], logged: [] as string[], errors: [] as string[] }
    vi.spyOn(process.stdout, 'write').mockImplementation((text: string | Uint8Array) => {
      out.printed.push(String(text))
      return true
    })
    vi.spyOn(console, 'log').mockImplementation((text: unknown) => {
      out.logged.push(String(text))
    })
    vi.spyOn(console, 'error').mockImplementation((text: unknown) => {
      out.errors.push(String(text))
    })
    return out
  }

  it('with no API key prints one error line, sets exit code 1 and calls no model', async () => {
    const server = fakeFetch([])
    vi.stubGlobal('fetch', server.fetch)
    vi.stubEnv('DEEPSEEK_API_KEY', '')
    vi.stubEnv('DSH_SCRIPTED', '')
    const { printed, logged, errors } = captureOutput()
    process.chdir(mkdtempSync(join(tmpdir(), 'dsh-readme-')))

    await import('../snippets/readme.ts')

    expect(errors).toEqual([
      'error: deepseek: apiKey is empty; set DEEPSEEK_API_KEY (https://platform.deepseek.com/api_keys)',
    ])
    expect([printed, logged, server.calls.length, process.exitCode]).toEqual([[], [], 0, 1])
  })

  it('with DSH_SCRIPTED=1 runs the scripted stand-in without a key or the network', async () => {
    const server = fakeFetch([])
    vi.stubGlobal('fetch', server.fetch)
    vi.stubEnv('DEEPSEEK_API_KEY', '')
    vi.stubEnv('DSH_SCRIPTED', '1')
    const { printed, logged, errors } = captureOutput()
    process.chdir(mkdtempSync(join(tmpdir(), 'dsh-readme-')))

    await import('../snippets/readme.ts')

    expect(printed.join('')).toBe('2 + 40 = 42.')
    expect(logged[0]).toBe('[add {"a":2,"b":40}]')
    expect([errors, server.calls.length, process.exitCode]).toEqual([[], 0, undefined])
  })

  it('runs a tool-using turn against an OpenAI-compatible stream and writes a clean session file', async () => {
    const server = fakeFetch([sseToolCall('call_1', 'add', '{"a":2,"b":40}'), sseText('2 + 40', ' = 42.')])
    vi.stubGlobal('fetch', server.fetch)
    vi.stubEnv('DEEPSEEK_API_KEY', 'sk-test')
    const { printed, logged } = captureOutput()
    const dir = mkdtempSync(join(tmpdir(), 'dsh-readme-'))
    process.chdir(dir)

    await import('../snippets/readme.ts')

    expect(printed.join('')).toBe('2 + 40 = 42.')
    expect(logged[0]).toBe('[add {"a":2,"b":40}]')
    expect(logged[1]).toMatch(/^\n\[completed in 2 steps; session \S+\]$/)
    expect(server.calls.map((call) => call.url)).toEqual([
      'https://api.deepseek.com/chat/completions',
      'https://api.deepseek.com/chat/completions',
    ])
    expect(server.calls[0]?.headers.get('authorization')).toBe('Bearer sk-test')
    expect(server.calls[0]?.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Add two numbers',
          parameters: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' } },
            required: ['a', 'b'],
            additionalProperties: false,
          },
        },
      },
    ])
    expect(server.calls[1]?.body.messages).toEqual([
      { role: 'user', content: 'What is 2 + 40? Use the add tool.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":40}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
    ])
    const files = readdirSync(join(dir, 'sessions')).filter((name) => name.endsWith('.jsonl'))
    expect(files).toHaveLength(1)
    const log = readRecordedLog(join(dir, 'sessions', files[0] ?? ''))
    expect(checkSessionLog(log.events)).toEqual([])
    expect(log.events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })
})
