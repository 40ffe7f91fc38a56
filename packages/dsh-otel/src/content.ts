/** Opt-in content capture: messages and blocks as the GenAI conventions' JSON message shapes. */
import type { ContentBlock, Message } from 'dsh-llm'

type Part = { readonly [key: string]: unknown }

/** One content block as a GenAI message part; unknown block types pass through as `{type, ...}`. */
export function genAiPart(block: ContentBlock): Part {
  switch (block.type) {
    case 'text':
      return { type: 'text', content: block.text }
    case 'reasoning':
      return { type: 'reasoning', content: block.text }
    case 'tool-call':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments }
    case 'tool-result':
      return { type: 'tool_call_response', id: block.toolCallId, response: block.content.map(genAiPart) }
    default:
      return { ...(block as Part) }
  }
}

/** `gen_ai.input.messages`: the request's messages as JSON `[{role, parts}]`. */
export function inputMessages(messages: readonly Message[]): string {
  return JSON.stringify(messages.map((m) => ({ role: m.role, parts: m.content.map(genAiPart) })))
}

/** `gen_ai.output.messages`: the completed blocks as one assistant message with its finish reason. */
export function outputMessages(blocks: readonly ContentBlock[], finishReason: string): string {
  return JSON.stringify([{ role: 'assistant', parts: blocks.map(genAiPart), finish_reason: finishReason }])
}

/** `gen_ai.system_instructions`: the system prompt as one text part. */
export function systemInstructions(system: string): string {
  return JSON.stringify([{ type: 'text', content: system }])
}

/** A tool result's content as JSON parts, for `gen_ai.tool.call.result`. */
export function toolResult(content: readonly ContentBlock[]): string {
  return JSON.stringify(content.map(genAiPart))
}
