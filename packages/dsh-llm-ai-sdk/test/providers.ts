/** The provider models of the tests, each over a recorded fetch (no network, fake keys). */
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createMistral } from '@ai-sdk/mistral'
import { createOpenAI } from '@ai-sdk/openai'
import type { LanguageModelV3 } from '@ai-sdk/provider'

/** Gemini through `@ai-sdk/google`. */
export function gemini(fetch: typeof globalThis.fetch): LanguageModelV3 {
  return createGoogleGenerativeAI({ apiKey: 'test-google-key', fetch }).languageModel('gemini-2.5-flash')
}

/** OpenAI Responses through `@ai-sdk/openai`. */
export function openaiResponses(fetch: typeof globalThis.fetch): LanguageModelV3 {
  return createOpenAI({ apiKey: 'sk-test', fetch }).responses('o4-mini')
}

/** Mistral through `@ai-sdk/mistral`. */
export function mistral(fetch: typeof globalThis.fetch): LanguageModelV3 {
  return createMistral({ apiKey: 'test-mistral-key', fetch }).languageModel('mistral-large-latest')
}

/** Claude on Bedrock through `@ai-sdk/amazon-bedrock` (API-key auth, so nothing is signed). */
export function bedrock(fetch: typeof globalThis.fetch): LanguageModelV3 {
  return createAmazonBedrock({ region: 'us-east-1', apiKey: 'test-bedrock-key', fetch }).languageModel(
    'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  )
}
