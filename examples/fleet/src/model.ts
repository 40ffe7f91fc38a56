/**
 * The model a fleet host talks to: an OpenAI-compatible endpoint from `DSH_BASE_URL`, `DSH_API_KEY`
 * and `DSH_MODEL`, or, with none set, a tiny offline model that answers every prompt with its length.
 * `DSH_SLOW_MS=<ms>` makes the offline model slow, so a kill or a drain lands mid-turn: each turn then
 * calls the `clock` tool three times, waiting that long before each model reply.
 */
import type { LlmAdapter, LlmRequest } from 'dsh-llm'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { openAiCompatible } from 'dsh-llm-openai'

/** The provider name, model and adapter a host registers. */
export interface ModelChoice {
  readonly provider: string
  readonly model: string
  readonly adapter: LlmAdapter
}

/** Reads the model from `env`; throws naming the variable to set when the choice is incomplete. */
export function chooseModel(env: NodeJS.ProcessEnv = process.env): ModelChoice {
  const baseURL = env.DSH_BASE_URL?.trim()
  if (baseURL === undefined || baseURL === '') {
    const slowMs = Number(env.DSH_SLOW_MS ?? 0)
    if (!Number.isFinite(slowMs) || slowMs < 0)
      throw new Error(`DSH_SLOW_MS must be a number of ms, got ${env.DSH_SLOW_MS}`)
    return slowMs > 0
      ? { provider: 'offline', model: 'slow-clock', adapter: slowModel(slowMs) }
      : { provider: 'offline', model: 'echo-length', adapter: offlineModel() }
  }
  const model = env.DSH_MODEL?.trim()
  if (model === undefined || model === '') throw new Error(`DSH_BASE_URL is ${baseURL}: set DSH_MODEL too`)
  const apiKey = env.DSH_API_KEY?.trim()
  const adapter = openAiCompatible(apiKey === undefined || apiKey === '' ? { baseURL } : { baseURL, apiKey })
  return { provider: 'openai-compatible', model, adapter }
}

function offlineModel(): LlmAdapter {
  return {
    async *stream(request) {
      const last = request.messages[request.messages.length - 1]
      const text = last?.content.map((block) => (block.type === 'text' ? block.text : '')).join('') ?? ''
      for (const chunk of textResponse(`received ${text.length} characters`)) yield chunk
    },
  }
}

/** How many tool results the request holds since its last prompt (a text message from the user). */
function resultsSincePrompt(request: LlmRequest): number {
  let results = 0
  for (const message of request.messages) {
    for (const block of message.content) {
      if (block.type === 'tool-result') results++
      else if (message.role === 'user' && block.type === 'text') results = 0
    }
  }
  return results
}

/** The slow offline model: `clock` three times, then an answer, each reply after `delayMs`. */
function slowModel(delayMs: number): LlmAdapter {
  return {
    async *stream(request) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs)
        request.signal?.addEventListener('abort', () => {
          clearTimeout(timer)
          resolve()
        })
      })
      const done = resultsSincePrompt(request)
      const chunks =
        done < 3
          ? toolCallResponse(`clock-${request.messages.length}`, 'clock', {})
          : textResponse(`checked the clock ${done} times`)
      for (const chunk of chunks) yield chunk
    },
  }
}
