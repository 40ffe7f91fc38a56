/**
 * Which model the demo talks to. No configuration: the embedded scripted model. With `DSH_API_KEY`
 * and/or `DSH_BASE_URL` set: a real OpenAI-compatible endpoint (DeepSeek's when no base URL is given).
 */
import { type LlmAdapter, redact } from 'dsh-llm'
import { DEEPSEEK_BASE_URL, deepseek, openAiCompatible } from 'dsh-llm-openai'
import { scriptedModel } from './scripted-model.ts'

/** The model the demo runs on. */
export interface ModelChoice {
  /** The provider name the adapter is registered under (and the agent asks for). */
  readonly provider: string
  readonly model: string
  readonly adapter: LlmAdapter
  /** One line for the transcript's banner. */
  readonly description: string
  /** True for the embedded scripted model (deterministic transcript). */
  readonly scripted: boolean
  /** The API root of a real model (for messages); `undefined` for the scripted one. */
  readonly baseURL?: string
}

/**
 * Reads `DSH_BASE_URL`, `DSH_API_KEY` and `DSH_MODEL` from `env`. Throws an `Error` saying what to
 * set when a base URL other than DeepSeek's is given without `DSH_MODEL`, and the adapter's
 * `INVALID_OPTIONS` error for a base URL that is not an absolute http(s) URL.
 */
export function chooseModel(env: NodeJS.ProcessEnv = process.env): ModelChoice {
  const baseURL = nonEmpty(env.DSH_BASE_URL)
  const apiKey = nonEmpty(env.DSH_API_KEY)
  const model = nonEmpty(env.DSH_MODEL)
  if (baseURL === undefined && apiKey === undefined) {
    return {
      provider: 'scripted',
      model: 'tiny-coder',
      adapter: scriptedModel(),
      description:
        'model: the scripted model from dsh-llm/testing (set DSH_API_KEY, DSH_BASE_URL, DSH_MODEL for a real one)',
      scripted: true,
    }
  }
  if (baseURL === undefined || baseURL.replace(/\/+$/, '') === DEEPSEEK_BASE_URL) {
    const chosen = model ?? 'deepseek-chat'
    return {
      provider: 'deepseek',
      model: chosen,
      adapter: deepseek({ apiKey: apiKey ?? '' }),
      description: `model: ${chosen} at ${DEEPSEEK_BASE_URL}`,
      scripted: false,
      baseURL: DEEPSEEK_BASE_URL,
    }
  }
  if (model === undefined) {
    throw new Error(`DSH_BASE_URL is ${redact(baseURL)}: set DSH_MODEL to the model to use`)
  }
  return {
    provider: 'openai-compatible',
    model,
    adapter: openAiCompatible(apiKey === undefined ? { baseURL } : { baseURL, apiKey }),
    // A base URL may carry a key (`?api-key=...`, `user:password@`): print it redacted.
    description: `model: ${model} at ${redact(baseURL)}`,
    scripted: false,
    baseURL,
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
