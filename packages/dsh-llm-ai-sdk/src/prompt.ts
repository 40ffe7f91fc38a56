/**
 * Request mapping, the one place a dsh `LlmRequest` becomes the AI SDK's `LanguageModelV3` call
 * options: the prompt (system, messages, tool calls and results paired), the tools and every call
 * option.
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider'
import {
  type AssistantMessage,
  type ContentBlock,
  isToolResultMessage,
  LlmError,
  LlmErrorCode,
  type LlmRequest,
  llmFailure,
  type Message,
  type ToolResultMessage,
} from 'dsh-llm'
import { cacheBreakpoints } from './cache.ts'
import { providerOptionsOf } from './provider-data.ts'
import { reasoningOptions } from './reasoning.ts'
import type { AiSdkNotice } from './types.ts'

/** What the mapping needs besides the request. */
export interface PromptContext {
  /** The provider options key of the model (`anthropic`, `google`, `bedrock`, ...). */
  readonly providerKey: string
  readonly label: string
  readonly providerOptions: SharedV3ProviderOptions | undefined
  readonly headers: Readonly<Record<string, string>> | undefined
  readonly notice: (notice: AiSdkNotice) => void
}

/**
 * Maps `request` to call options. Each dsh message becomes one prompt message in order, except
 * that consecutive tool results join one `tool` message (every provider wants a step's results
 * together); each tool result names its call's tool, found in the earlier assistant message. A
 * block's `providerData` goes out verbatim as its part's `providerOptions`. `temperature`,
 * `maxTokens` and `stop` map to their V3 fields; `reasoningEffort` to the provider's own option
 * (a notice when the provider has none); the cache policy to breakpoints (see `cacheBreakpoints`).
 * Throws `LlmError` `INVALID_REQUEST` naming the message id and block type for a block the prompt
 * cannot carry there.
 */
export function buildCallOptions(request: LlmRequest, context: PromptContext): LanguageModelV3CallOptions {
  const prompt: LanguageModelV3Message[] = []
  if (request.system !== undefined && request.system !== '') {
    prompt.push({ role: 'system', content: request.system })
  }
  const toolNames = new Map<string, string>()
  const positions: number[] = []
  for (const message of request.messages) {
    appendMessage(prompt, message, toolNames)
    positions.push(prompt.length - 1)
  }
  cacheBreakpoints(prompt, positions, request, context)
  const options: LanguageModelV3CallOptions = { prompt: prompt as LanguageModelV3Prompt }
  if (request.tools !== undefined && request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters as LanguageModelV3FunctionTool['inputSchema'],
    }))
  }
  if (request.temperature !== undefined) options.temperature = request.temperature
  if (request.maxTokens !== undefined) options.maxOutputTokens = request.maxTokens
  if (request.stop !== undefined && request.stop.length > 0) options.stopSequences = [...request.stop]
  const derived = reasoningOptions(request, context)
  const providerOptions = mergeOptions(derived, context.providerOptions)
  if (providerOptions !== undefined) options.providerOptions = providerOptions
  if (context.headers !== undefined) options.headers = { ...context.headers }
  if (request.signal !== undefined) options.abortSignal = request.signal
  return options
}

function appendMessage(
  prompt: LanguageModelV3Message[],
  message: Message,
  toolNames: Map<string, string>,
): void {
  if (message.role === 'assistant') {
    prompt.push(assistantMessage(message, toolNames))
    return
  }
  if (isToolResultMessage(message)) {
    const part = toolResultPart(message, toolNames)
    const last = prompt[prompt.length - 1]
    if (last?.role === 'tool') last.content.push(part)
    else prompt.push({ role: 'tool', content: [part] })
    return
  }
  prompt.push({
    role: 'user',
    content: message.content.map((block) => {
      if (block.type !== 'text') throw unsupported(message, block)
      return withOptions({ type: 'text', text: block.text }, block)
    }),
  })
}

function assistantMessage(message: AssistantMessage, toolNames: Map<string, string>): LanguageModelV3Message {
  const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = []
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        content.push(withOptions({ type: 'text', text: block.text }, block))
        break
      case 'reasoning':
        content.push(withOptions({ type: 'reasoning', text: block.text }, block))
        break
      case 'tool-call':
        toolNames.set(block.id, block.name)
        content.push(
          withOptions(
            {
              type: 'tool-call',
              toolCallId: block.id,
              toolName: block.name,
              input: parseInput(block.arguments),
            },
            block,
          ),
        )
        break
      default:
        throw unsupported(message, block)
    }
  }
  return { role: 'assistant', content }
}

/** The call's input as a value (providers serialize it themselves); unparseable text stays text. */
function parseInput(text: string): unknown {
  try {
    return JSON.parse(text === '' ? '{}' : text)
  } catch {
    return text
  }
}

function toolResultPart(
  message: ToolResultMessage,
  toolNames: Map<string, string>,
): LanguageModelV3ToolResultPart {
  const [result] = message.content
  let text = ''
  for (const block of result.content) {
    if (block.type !== 'text') throw unsupported(message, block)
    text += block.text
  }
  return {
    type: 'tool-result',
    toolCallId: result.toolCallId,
    toolName: toolNames.get(result.toolCallId) ?? '',
    output: result.isError === true ? { type: 'error-text', value: text } : { type: 'text', value: text },
  }
}

function withOptions<T extends object>(part: T, block: ContentBlock): T {
  const options = 'providerData' in block ? providerOptionsOf(block.providerData) : undefined
  return options === undefined ? part : { ...part, providerOptions: options }
}

/** `base` with `extra` merged in per provider key (`extra` wins member by member). */
export function mergeOptions(
  base: SharedV3ProviderOptions | undefined,
  extra: SharedV3ProviderOptions | undefined,
): SharedV3ProviderOptions | undefined {
  if (base === undefined) return extra === undefined ? undefined : { ...extra }
  if (extra === undefined) return base
  const out: SharedV3ProviderOptions = { ...base }
  for (const [key, value] of Object.entries(extra)) out[key] = { ...(out[key] ?? {}), ...value }
  return out
}

function unsupported(message: Message, block: ContentBlock): LlmError {
  const type: string = block.type
  return new LlmError(
    llmFailure(
      LlmErrorCode.INVALID_REQUEST,
      `ai-sdk request: ${message.role} message ${message.id} holds a '${type}' block, which the prompt cannot carry there`,
    ),
  )
}
