import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type LlmAdapter, type LlmRequest, SessionId, type StreamChunk, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import {
  canonicalRequest,
  ReplayErrorCode,
  ReplayFixtureError,
  ReplayMissError,
  recordReplay,
  requestKey,
  resolveMode,
} from 'dsh-replay'
import { expect, it } from 'vitest'

async function collect(adapter: LlmAdapter, request: LlmRequest): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of adapter.stream(request)) chunks.push(chunk)
  return chunks
}

const ask = (text: string, extra: Partial<LlmRequest> = {}): LlmRequest => ({
  provider: 'rec',
  model: 'm',
  system: 'Be brief.',
  messages: [userText('Read the notes.'), userText(text)],
  ...extra,
})

async function recorded(): Promise<string> {
  const fixture = join(await mkdtemp(join(tmpdir(), 'dsh-replay-')), 'miss.json')
  const adapter = recordReplay({
    fixture,
    mode: 'record',
    adapter: scriptedAdapter([textResponse('one'), textResponse('two')]),
  })
  await collect(adapter, ask('What is in a.txt?'))
  await collect(adapter, ask('What is in b.txt?', { temperature: 0.2 }))
  return fixture
}

it('an unmatched request fails with REPLAY_MISS naming the nearest recorded request and the difference', async () => {
  const fixture = await recorded()
  const replay = recordReplay({ fixture, mode: 'replay' })
  const request = ask('What is in c.txt?', { temperature: 0.2 })
  const error = await collect(replay, request).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ReplayMissError)
  const miss = error as ReplayMissError
  expect(miss.code).toBe(ReplayErrorCode.REPLAY_MISS)
  expect(miss.failure.code).toBe('REPLAY_MISS')
  expect(miss.key).toBe(requestKey(canonicalRequest(request)))
  expect(miss.nearest?.index).toBe(1)
  expect(miss.message).toBe(
    [
      `replay: no recorded response for request #1 (provider "rec", model "m", 2 messages, ${miss.key}) in ${fixture}`,
      `nearest recorded: exchange #1 (${replay.exchanges[1]?.key}), 1 differences:`,
      '  messages[1].content[0].text: recorded "What is in b.txt?", got "What is in c.txt?"',
      're-record with DSH_REPLAY=record if the change is intended',
    ].join('\n'),
  )
  expect(replay.misses).toEqual([miss])
})

it('a miss lists absent fields as (absent) and counts the differences past the tenth', async () => {
  const fixture = await recorded()
  const replay = recordReplay({ fixture, mode: 'replay' })
  const request = ask('What is in a.txt?', { maxTokens: 100 })
  const miss = await collect(replay, request).catch((e: unknown) => e as ReplayMissError)
  expect((miss as ReplayMissError).nearest?.differences).toEqual([
    { path: 'maxTokens', recorded: undefined, got: 100 },
  ])
  expect((miss as ReplayMissError).message).toContain('  maxTokens: recorded (absent), got 100\n')
})

it('message ids, sessionId, signal and key order do not change the key; content, config and tools do', () => {
  const base = ask('hi')
  const same: LlmRequest = {
    messages: base.messages.map((m) => ({ ...m, id: `other-${m.id}` }) as typeof m),
    system: 'Be brief.',
    model: 'm',
    provider: 'rec',
    sessionId: SessionId('s-9'),
    signal: new AbortController().signal,
  }
  const key = requestKey(canonicalRequest(base))
  expect(requestKey(canonicalRequest(same))).toBe(key)
  expect(requestKey(canonicalRequest(ask('hi', { temperature: 0 })))).not.toBe(key)
  expect(requestKey(canonicalRequest(ask('hi', { model: 'n' })))).not.toBe(key)
  expect(requestKey(canonicalRequest(ask('hi!')))).not.toBe(key)
  expect(
    requestKey(canonicalRequest(ask('hi', { tools: [{ name: 't', description: 'd', parameters: {} }] }))),
  ).not.toBe(key)
})

it('identical requests replay their recordings in recorded order, the last one repeating', async () => {
  const fixture = join(await mkdtemp(join(tmpdir(), 'dsh-replay-')), 'same.json')
  const record = recordReplay({
    fixture,
    mode: 'record',
    adapter: scriptedAdapter([textResponse('first'), textResponse('second')]),
  })
  await collect(record, ask('again'))
  await collect(record, ask('again'))
  const replay = recordReplay({ fixture, mode: 'replay' })
  const text = async () =>
    (await collect(replay, ask('again'))).flatMap((c) => (c.type === 'text-delta' ? [c.text] : [])).join('')
  expect([await text(), await text(), await text()]).toEqual(['first', 'second', 'second'])
})

it('the fixture is indented JSON holding each canonical request and its chunks', async () => {
  const fixture = await recorded()
  const text = await readFile(fixture, 'utf8')
  expect(text.startsWith('{\n  "format": "dsh-replay/1",\n  "exchanges": [\n')).toBe(true)
  const parsed = JSON.parse(text) as { exchanges: { request: unknown; chunks: StreamChunk[] }[] }
  expect(parsed.exchanges[0]?.request).toEqual({
    messages: [
      { content: [{ text: 'Read the notes.', type: 'text' }], role: 'user', source: { kind: 'user' } },
      { content: [{ text: 'What is in a.txt?', type: 'text' }], role: 'user', source: { kind: 'user' } },
    ],
    model: 'm',
    provider: 'rec',
    system: 'Be brief.',
  })
  expect(parsed.exchanges[0]?.chunks).toEqual(JSON.parse(JSON.stringify(textResponse('one'))))
})

it('replaying a missing or malformed fixture throws FIXTURE_INVALID naming the file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-replay-'))
  const missing = join(dir, 'none.json')
  expect(() => recordReplay({ fixture: missing, mode: 'replay' })).toThrow(
    new ReplayFixtureError(
      missing,
      `replay fixture ${missing} cannot be read (record it first with DSH_REPLAY=record)`,
    ),
  )
  const bad = join(dir, 'bad.json')
  await writeFile(
    bad,
    JSON.stringify({ format: 'dsh-replay/1', exchanges: [{ key: 'md5:x', request: {}, chunks: [] }] }),
  )
  expect(() => recordReplay({ fixture: bad, mode: 'replay' })).toThrow(
    `replay fixture ${bad} is not a dsh-replay/1 fixture at exchanges.0.key`,
  )
})

it('DSH_REPLAY chooses the mode when none is given, and a typo is an error', () => {
  expect(resolveMode(undefined, undefined)).toBe('replay')
  expect(resolveMode(undefined, 'record')).toBe('record')
  expect(resolveMode('replay', 'record')).toBe('replay')
  expect(() => resolveMode(undefined, 'recrod')).toThrow(
    'DSH_REPLAY must be "record" or "replay", got "recrod"',
  )
})
