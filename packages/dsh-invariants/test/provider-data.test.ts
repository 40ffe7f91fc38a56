/** Re-derivation covers replay metadata and the cache policy (issue 32). */
import { compareRequests } from 'dsh-invariants'
import { createAssistantMessage, type LlmRequest, userText } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

const user = userText('hi')
function withSignature(signature: string) {
  return createAssistantMessage({
    id: 'a1',
    content: [
      { type: 'reasoning', text: 'think', providerData: { anthropic: { signature } } },
      { type: 'text', text: 'answer' },
    ],
    source: { kind: 'model', provider: 'anthropic', model: 'claude' },
  })
}
function request(extra: Partial<LlmRequest>): LlmRequest {
  return { provider: 'anthropic', model: 'claude', messages: [user, withSignature('sig-A')], ...extra }
}

describe('compareRequests and issue 32 data', () => {
  it('a changed signature is a difference, named by its path', () => {
    expect(compareRequests(request({}), request({ messages: [user, withSignature('sig-B')] }), 0)).toBe(
      'field messages differs at index 1 (history[1], message a1) at messages[1].content[0].providerData.anthropic.signature: the log implies "sig-A", the request has "sig-B"',
    )
  })

  it('a dropped signature is a difference', () => {
    const stripped = createAssistantMessage({
      id: 'a1',
      content: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'answer' },
      ],
      source: { kind: 'model', provider: 'anthropic', model: 'claude' },
    })
    expect(compareRequests(request({}), request({ messages: [user, stripped] }), 0)).toBe(
      'field messages differs at index 1 (history[1], message a1) at messages[1].content[0].providerData: the log implies {"anthropic":{"signature":"sig-A"}}, the request has nothing',
    )
  })

  it('the cache policy is compared in its place among the config fields', () => {
    expect(
      compareRequests(
        request({ cachePolicy: { breakpoints: 'auto' } }),
        request({ cachePolicy: { breakpoints: 'none' } }),
        0,
      ),
    ).toBe(
      'field cachePolicy differs at cachePolicy.breakpoints: the log implies "auto", the request has "none"',
    )
    expect(compareRequests(request({ cachePolicy: { breakpoints: 'auto' } }), request({}), 0)).toBe(
      'field cachePolicy differs at cachePolicy: the log implies {"breakpoints":"auto"}, the request has nothing',
    )
  })
})
