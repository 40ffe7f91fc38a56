/** An agent app with Claude through the AI SDK over recorded responses, every invariant mounted. */
import { Context } from 'cordis'
import AgentLoop, { type AgentOptions, ToolRegistry } from 'dsh-agent-loop'
import type { InvariantRegistry } from 'dsh-invariants'
import { mountInvariants } from 'dsh-invariants/vitest'
import { LlmRuntime } from 'dsh-llm'
import { type SessionStorage, Sessions } from 'dsh-session'
import { fromAiSdk } from '../src/index.ts'
import * as fx from './fixtures/anthropic.ts'
import { claude } from './helpers.ts'
import { type Recorded, type RecordedFetch, recordedFetch } from './recorded.ts'

/** The call options every agent of these tests uses (the child process gets the same). */
export const AGENT_OPTIONS = {
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  maxTokens: 2048,
  reasoningEffort: 'low',
  system: 'You are a travel assistant.',
  cachePolicy: { breakpoints: 'auto' },
} as const satisfies Partial<AgentOptions>

/** A mounted app and what its model was asked. */
export interface AgentApp {
  readonly app: Context
  readonly recorded: RecordedFetch
  readonly invariants: InvariantRegistry
}

function schema(key: string) {
  return { type: 'object', properties: { [key]: { type: 'string' } }, required: [key] } as const
}

/** Mounts the stack over `storage`, registers the two tools and Claude answering from `script`. */
export async function agentApp(script: readonly Recorded[], storage?: SessionStorage): Promise<AgentApp> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, storage === undefined ? {} : { storage })
  const invariants = await mountInvariants(app, {})
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop, {})
  app.tools.register({
    name: 'get_weather',
    description: 'Weather at a place',
    parameters: schema('location'),
    execute: () => '18°C',
  })
  app.tools.register({
    name: 'get_time',
    description: 'Time in a zone',
    parameters: schema('timezone'),
    execute: () => '14:05',
  })
  const recorded = recordedFetch(script)
  app.llm.registerAdapter('anthropic', fromAiSdk(claude(recorded.fetch), { onNotice: () => undefined }))
  return { app, recorded, invariants }
}

/** The thinking and redacted-thinking blocks of an Anthropic request body, in order, as sent. */
export function replayBlocks(body: string): unknown[] {
  const parsed = JSON.parse(body) as { messages: { content: { type: string }[] }[] }
  const out: unknown[] = []
  for (const message of parsed.messages) {
    for (const part of message.content) {
      if (part.type === 'thinking' || part.type === 'redacted_thinking') out.push(part)
    }
  }
  return out
}

/** What every later request must carry, in this order, byte for byte. */
export const EXPECTED_REPLAY = [
  {
    type: 'thinking',
    thinking: 'The user wants the weather in Paris. I should call get_weather.',
    signature: fx.SIGNATURES.weather,
  },
  { type: 'redacted_thinking', data: fx.SIGNATURES.redacted },
  { type: 'thinking', thinking: 'It is 18 degrees. Now the time there.', signature: fx.SIGNATURES.second },
  { type: 'redacted_thinking', data: fx.SIGNATURES.redactedSecond },
]

/** The signatures and redacted data in order of appearance in a raw body. */
export function opaqueInOrder(body: string): string[] {
  const all = Object.values(fx.SIGNATURES)
  return all
    .map((value) => ({ value, at: body.indexOf(JSON.stringify(value)) }))
    .filter((hit) => hit.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((hit) => hit.value)
}
