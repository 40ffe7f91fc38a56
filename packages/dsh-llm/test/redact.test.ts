import { Context } from 'cordis'
import {
  HarnessError,
  LlmError,
  LlmErrorCode,
  type LlmFailure,
  LlmRuntime,
  llmFailure,
  REDACTED,
  redact,
  redactError,
  redactFailure,
  registerSecret,
  registerUrlSecrets,
  type StreamChunk,
} from 'dsh-llm'
import { describe, expect, it } from 'vitest'

const KEY = 'sk-redact-test-0123456789'
registerSecret(KEY)

describe('redact', () => {
  it('replaces URL userinfo, secret query values and secret header values', () => {
    expect(redact('POST http://user:pw@127.0.0.1:9/v1?api-key=abc&x=1 failed')).toBe(
      `POST http://${REDACTED}@127.0.0.1:9/v1?api-key=${REDACTED}&x=1 failed`,
    )
    expect(redact('https://h/v1/chat?api-version=2024&key=zz&access_token=t0k')).toBe(
      `https://h/v1/chat?api-version=2024&key=${REDACTED}&access_token=${REDACTED}`,
    )
    expect(redact('authorization: Bearer abcdefgh123')).toBe(`authorization: Bearer ${REDACTED}`)
    expect(redact('{"api-key":"abc123","x-api-key": "q"}')).toBe(
      `{"api-key":"${REDACTED}","x-api-key": "${REDACTED}"}`,
    )
    expect(redact('sent Bearer abcdefgh12345678 to it')).toBe(`sent Bearer ${REDACTED} to it`)
  })

  it('replaces every occurrence of a registered secret, and leaves clean text as it is', () => {
    expect(redact(`Incorrect API key provided: ${KEY}. (${KEY})`)).toBe(
      `Incorrect API key provided: ${REDACTED}. (${REDACTED})`,
    )
    const clean = 'connect ECONNREFUSED 127.0.0.1:9 (basic functionality, authorization failed)'
    expect(redact(clean)).toBe(clean)
  })

  it('is idempotent', () => {
    const once = redact(`http://u:${KEY}@h/v1?api-key=${KEY} authorization: Bearer ${KEY}`)
    expect(once).toBe(`http://${REDACTED}@h/v1?api-key=${REDACTED} authorization: Bearer ${REDACTED}`)
    expect(redact(once)).toBe(once)
  })

  it('registers the credentials of a URL', () => {
    registerUrlSecrets('http://alice:pa55word-url@h/v1?token=tok-from-url&api-version=1')
    expect(redact('pa55word-url tok-from-url 1')).toBe(`${REDACTED} ${REDACTED} 1`)
  })

  it('ignores secrets too short to be credentials', () => {
    registerSecret('ab')
    expect(redact('about')).toBe('about')
  })
})

describe('errors and failures carry no secret', () => {
  it('llmFailure and HarnessError redact their message; a cause chain is copied redacted', () => {
    expect(llmFailure('AUTH', `bad key ${KEY}`, { requestId: KEY }).message).toBe(`bad key ${REDACTED}`)
    const root = Object.assign(new TypeError(`fetch to http://u:${KEY}@h failed`), { code: 'E1' })
    const middle = new Error(`wrapped ${KEY}`, { cause: root })
    const error = new HarnessError('X', `outer ${KEY}`, { cause: middle })
    expect(error.message).toBe(`outer ${REDACTED}`)
    const cause = error.cause as Error
    expect(cause.message).toBe(`wrapped ${REDACTED}`)
    expect(cause.stack).not.toContain(KEY)
    const rootCopy = cause.cause as TypeError & { code: string }
    expect(rootCopy).toBeInstanceOf(TypeError)
    expect(rootCopy.message).toBe(`fetch to http://${REDACTED}@h failed`)
    expect(rootCopy.code).toBe('E1')
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(KEY)
  })

  it('a clean error and a clean failure are returned as they are', () => {
    const error = new Error('fine', { cause: new Error('also fine') })
    expect(redactError(error)).toBe(error)
    const failure = llmFailure('SERVER', 'fine')
    expect(redactFailure(failure)).toBe(failure)
  })

  it('the runtime redacts the failure of any adapter, yielded or thrown', async () => {
    const app = new Context()
    await app.plugin(LlmRuntime)
    const raw: LlmFailure = { code: LlmErrorCode.SERVER, message: `upstream said ${KEY}` }
    app.llm.registerAdapter('yields', {
      async *stream() {
        yield { type: 'finish', reason: { kind: 'error', failure: raw } } satisfies StreamChunk
      },
    })
    app.llm.registerAdapter('throws', {
      // biome-ignore lint/correctness/useYield: an adapter that fails before its first chunk
      async *stream() {
        throw new LlmError({ code: LlmErrorCode.AUTH, message: `refused ${KEY}` })
      },
    })
    app.llm.registerAdapter('throws-plain', {
      // biome-ignore lint/correctness/useYield: an adapter that fails before its first chunk
      async *stream() {
        throw new Error(`boom at https://h/v1?api_key=${KEY}`)
      },
    })
    const finishes: unknown[] = []
    for (const provider of ['yields', 'throws', 'throws-plain']) {
      for await (const chunk of app.llm.stream({ provider, model: 'm', messages: [] })) finishes.push(chunk)
    }
    expect(finishes).toEqual([
      {
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'SERVER', message: `upstream said ${REDACTED}` } },
      },
      {
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'AUTH', message: `refused ${REDACTED}` } },
      },
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'ADAPTER_THREW',
            message: `adapter for "throws-plain" threw: boom at https://h/v1?api_key=${REDACTED}`,
          },
        },
      },
    ])
  })
})
