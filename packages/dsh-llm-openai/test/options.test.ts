/** Fail-fast options: a missing base URL or an empty API key is refused when the adapter is created. */
import { HarnessError } from 'dsh-llm'
import { deepseek, type OpenAiCompatibleOptions, openAiCompatible } from 'dsh-llm-openai'
import { describe, expect, it } from 'vitest'

function refusal(create: () => unknown): unknown {
  try {
    create()
  } catch (error) {
    return error
  }
  return undefined
}

describe('openAiCompatible options', () => {
  it('refuses a missing baseURL with INVALID_OPTIONS instead of a TypeError', () => {
    const error = refusal(() => openAiCompatible({} as OpenAiCompatibleOptions))
    expect(error).toBeInstanceOf(HarnessError)
    expect(error).toMatchObject({
      code: 'INVALID_OPTIONS',
      message: 'openAiCompatible: baseURL is required (the API root, e.g. "https://api.openai.com/v1")',
    })
  })

  it('refuses an empty apiKey, and accepts none for servers that need no key', () => {
    expect(refusal(() => openAiCompatible({ baseURL: 'http://127.0.0.1:1/v1', apiKey: '' }))).toMatchObject({
      code: 'INVALID_OPTIONS',
      message:
        'openAiCompatible: apiKey is empty; pass the key, or leave apiKey out for a server that needs none',
    })
    expect(refusal(() => openAiCompatible({ baseURL: 'http://127.0.0.1:1/v1', apiKey: '  ' }))).toMatchObject(
      {
        code: 'INVALID_OPTIONS',
      },
    )
    expect(refusal(() => openAiCompatible({ baseURL: 'http://127.0.0.1:1/v1' }))).toBeUndefined()
  })
})

describe('deepseek options', () => {
  it('refuses an empty or missing apiKey, naming the environment variable to set', () => {
    for (const apiKey of ['', undefined]) {
      expect(refusal(() => deepseek({ apiKey } as { apiKey: string }))).toMatchObject({
        code: 'INVALID_OPTIONS',
        message: 'deepseek: apiKey is empty; set DEEPSEEK_API_KEY (https://platform.deepseek.com/api_keys)',
      })
    }
    expect(refusal(() => deepseek({ apiKey: 'sk-test' }))).toBeUndefined()
  })
})
