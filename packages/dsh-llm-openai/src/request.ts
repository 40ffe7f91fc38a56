/** Request mapping: a dsh `LlmRequest` becomes a Chat Completions streaming body. */
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
import type {
  ChatCompletionBody,
  MaxTokensField,
  ReasoningReplay,
  WireMessage,
  WireToolCall,
} from './types.ts'

/** The adapter options that shape the body. */
export interface BodyPolicy {
  readonly reasoningReplay: ReasoningReplay
  readonly sendReasoningEffort: boolean
  readonly maxTokensField: MaxTokensField
  readonly includeUsage: boolean
}

/**
 * Maps `request` to the body the adapter posts. Each dsh message becomes exactly one wire message, in
 * order (consecutive user messages stay separate); the system prompt, when present, goes first.
 * Throws `LlmError` with code `INVALID_REQUEST` naming the message id and block type when a message
 * holds a block this wire format cannot carry (e.g. a plugin's own block kind).
 */
export function buildChatBody(request: LlmRequest, policy: BodyPolicy): ChatCompletionBody {
  const messages: WireMessage[] = []
  if (request.system !== undefined && request.system !== '') {
    messages.push({ role: 'system', content: request.system })
  }
  const replay = replayMode(request, policy.reasoningReplay)
  for (const message of request.messages) messages.push(mapMessage(message, replay))
  const body: { -readonly [K in keyof ChatCompletionBody]: ChatCompletionBody[K] } = {
    model: request.model,
    messages,
    stream: true,
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.maxTokens !== undefined) body[policy.maxTokensField] = request.maxTokens
  if (request.stop !== undefined && request.stop.length > 0) body.stop = [...request.stop]
  if (request.reasoningEffort !== undefined && policy.sendReasoningEffort) {
    body.reasoning_effort = request.reasoningEffort
  }
  if (policy.includeUsage) body.stream_options = { include_usage: true }
  return body
}

/**
 * How assistant reasoning travels back: `omit`; `reasoning_content` (only messages that have
 * reasoning carry it); or `reasoning_content-required` — thinking mode is evidently on (a reasoning
 * effort is set or the history has reasoning), so every assistant message with tool calls carries the
 * field, empty when the model produced no reasoning for it. DeepSeek's thinking mode answers 400
 * when a tool-call turn's `reasoning_content` is missing from later requests.
 */
type ReplayMode = ReasoningReplay | 'reasoning_content-required'

function replayMode(request: LlmRequest, replay: ReasoningReplay): ReplayMode {
  if (replay !== 'reasoning_content') return replay
  if (request.reasoningEffort !== undefined) return 'reasoning_content-required'
  const thinking = request.messages.some(
    (message) => message.role === 'assistant' && message.content.some((block) => block.type === 'reasoning'),
  )
  return thinking ? 'reasoning_content-required' : replay
}

function mapMessage(message: Message, replay: ReplayMode): WireMessage {
  if (message.role === 'assistant') return mapAssistant(message, replay)
  if (isToolResultMessage(message)) return mapToolResult(message)
  return { role: 'user', content: textContent(message, message.content) }
}

function mapToolResult(message: ToolResultMessage): WireMessage {
  const [result] = message.content
  // The wire `tool` message has no error flag: an error result travels as its text.
  return { role: 'tool', tool_call_id: result.toolCallId, content: textContent(message, result.content) }
}

/**
 * The text blocks joined into one string (`''` for none). A plain string is the one content shape
 * every compatible server accepts: DeepSeek and older llama.cpp servers refuse content-part arrays.
 */
function textContent(message: Message, blocks: readonly ContentBlock[]): string {
  let text = ''
  for (const block of blocks) {
    if (block.type !== 'text') throw unsupported(message, block)
    text += block.text
  }
  return text
}

function mapAssistant(message: AssistantMessage, replay: ReplayMode): WireMessage {
  let text = ''
  let reasoning = ''
  let hasReasoning = false
  const toolCalls: WireToolCall[] = []
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        text += block.text
        break
      case 'reasoning':
        reasoning += block.text
        hasReasoning = true
        break
      case 'tool-call':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: block.arguments },
        })
        break
      default:
        throw unsupported(message, block)
    }
  }
  const content = text === '' && toolCalls.length > 0 ? null : text
  const wire: {
    role: 'assistant'
    content: string | null
    reasoning_content?: string
    tool_calls?: WireToolCall[]
  } = { role: 'assistant', content }
  const required = replay === 'reasoning_content-required' && toolCalls.length > 0
  if (replay !== 'omit' && (hasReasoning || required)) wire.reasoning_content = reasoning
  if (toolCalls.length > 0) wire.tool_calls = toolCalls
  return wire
}

function unsupported(message: Message, block: ContentBlock): LlmError {
  const type: string = block.type
  return new LlmError(
    llmFailure(
      LlmErrorCode.INVALID_REQUEST,
      `openai-compatible request: ${message.role} message ${message.id} holds a '${type}' block, which this wire format cannot carry there`,
    ),
  )
}
