/**
 * The model a fleet host talks to: an OpenAI-compatible endpoint from `DSH_BASE_URL`, `DSH_API_KEY`
 * and `DSH_MODEL`, or, with none set, a tiny offline model that answers every prompt with its length.
 */
import type { LlmAdapter } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
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
    return { provider: 'offline', model: 'echo-length', adapter: offlineModel() }
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
