import { detachedCopy, frozenCopy } from './freeze.ts'
import { type CallId, MessageId, newMessageId } from './ids.ts'
import type { ContentBlock, MessageSource, MessageSourceMap, ToolResultBlock } from './vocabulary.ts'

/**
 * User-role model input: a direct prompt, injected context or steering. They are told apart only by
 * `source`; there is no wrapper around injected content.
 */
export interface UserMessage {
  readonly id: MessageId
  readonly role: 'user'
  readonly content: readonly ContentBlock[]
  readonly source: MessageSource
}

/** What the model said in one step. */
export interface AssistantMessage {
  readonly id: MessageId
  readonly role: 'assistant'
  readonly content: readonly ContentBlock[]
  readonly source: MessageSourceMap['model']
}

/** The answer to one tool call: role `user`, exactly one `tool-result` block. */
export interface ToolResultMessage {
  readonly id: MessageId
  readonly role: 'user'
  readonly content: readonly [ToolResultBlock]
  readonly source: MessageSourceMap['tool']
}

/** Any message of the model's history. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage

/** True when `message` is a tool result (role `user` whose single block is a `tool-result`). */
export function isToolResultMessage(message: Message): message is ToolResultMessage {
  return message.source.kind === 'tool' && message.content[0]?.type === 'tool-result'
}

function resolveId(id: string | undefined): MessageId {
  return id === undefined ? newMessageId() : MessageId(id)
}

/**
 * Builds a deep-frozen user message detached from its input. `id` defaults to a fresh nanoid.
 * Throws `TypeError` if `content` is not an array.
 */
export function createUserMessage(input: {
  content: readonly ContentBlock[]
  source: MessageSource
  id?: string
}): UserMessage {
  if (!Array.isArray(input.content)) throw new TypeError('createUserMessage: content must be an array')
  return frozenCopy({ id: resolveId(input.id), role: 'user', content: input.content, source: input.source })
}

/** Shorthand for a user message with one text block and source `user` (or the given source). */
export function userText(text: string, source: MessageSource = { kind: 'user' }): UserMessage {
  return createUserMessage({ content: [{ type: 'text', text }], source })
}

/** Builds a deep-frozen assistant message detached from its input. */
export function createAssistantMessage(input: {
  content: readonly ContentBlock[]
  source: MessageSourceMap['model']
  id?: string
}): AssistantMessage {
  if (!Array.isArray(input.content)) throw new TypeError('createAssistantMessage: content must be an array')
  // An assembler's block list is already what the copy would be (see `markDetached`).
  return frozenMessage(
    resolveId(input.id),
    'assistant',
    detachedCopy(input.content),
    frozenCopy(input.source),
  )
}

/** Builds a deep-frozen tool result message answering `callId`. `isError` is kept only when true. */
export function createToolResultMessage(input: {
  callId: CallId
  content: readonly ContentBlock[]
  isError?: boolean
  id?: string
}): ToolResultMessage {
  if (!Array.isArray(input.content)) throw new TypeError('createToolResultMessage: content must be an array')
  const content = frozenCopy(input.content)
  const { callId } = input
  const block: ToolResultBlock =
    input.isError === true
      ? { type: 'tool-result', toolCallId: callId, content, isError: true }
      : { type: 'tool-result', toolCallId: callId, content }
  const message: ToolResultMessage = {
    id: resolveId(input.id),
    role: 'user',
    content: [block],
    source: { kind: 'tool', callId },
  }
  // Only the caller's content needs a copy; the wrappers are fresh, so they are frozen in place
  // (`frozenCopy` of the whole literal built each of them twice). A missing call id (a caller
  // outside the types) leaves no key, as the copy did.
  if (typeof callId !== 'string') return frozenCopy(message)
  Object.freeze(block)
  Object.freeze(message.content)
  Object.freeze(message.source)
  return Object.freeze(message)
}

/**
 * `frozenCopy({id, role, content, source})` for parts that are already detached and frozen: the
 * message object is built frozen instead of built and copied. Like `frozenCopy`, a missing `source`
 * leaves no key.
 */
function frozenMessage<M extends Message>(
  id: MessageId,
  role: M['role'],
  content: M['content'],
  source: M['source'] | undefined,
): M {
  const message = source === undefined ? { id, role, content } : { id, role, content, source }
  return Object.freeze(message) as M
}

/** Concatenates the text blocks of a message (reasoning and tool blocks are skipped). */
export function messageText(message: { readonly content: readonly ContentBlock[] }): string {
  let out = ''
  for (const block of message.content) if (block.type === 'text') out += block.text
  return out
}
