/** A delta's `content` as a string or as an array of typed parts (Mistral, some gateways). */
import { isRecord } from 'dsh-llm'
import { stringField } from './json.ts'

/** Where one piece of content goes: visible text, reasoning, or a refusal. */
export type PieceKind = 'text' | 'reasoning' | 'refusal'

/**
 * Walks `content` in order, calling `emit` for each non-empty piece and `unknown` with the `type` of
 * each part it cannot map. A string is text. In an array: `text` (and `output_text`) parts are text;
 * `thinking` parts (their `thinking` as a string or as text parts) and `reasoning` parts are
 * reasoning; `refusal` parts are a refusal. `null`/`undefined` emit nothing.
 */
export function readContent(
  content: unknown,
  emit: (kind: PieceKind, text: string) => void,
  unknown: (type: string) => void,
): void {
  if (typeof content === 'string') {
    if (content !== '') emit('text', content)
    return
  }
  if (!Array.isArray(content)) return
  for (const part of content) {
    if (typeof part === 'string') {
      if (part !== '') emit('text', part)
      continue
    }
    if (!isRecord(part)) continue
    const type = stringField(part.type) ?? ''
    switch (type) {
      case 'text':
      case 'output_text':
        put(emit, 'text', stringField(part.text))
        break
      case 'thinking':
        put(emit, 'reasoning', thinkingText(part.thinking))
        break
      case 'reasoning':
        put(emit, 'reasoning', stringField(part.text) ?? stringField(part.reasoning))
        break
      case 'refusal':
        put(emit, 'refusal', stringField(part.refusal) ?? stringField(part.text))
        break
      default:
        unknown(type === '' ? '(untyped)' : type)
    }
  }
}

function put(emit: (kind: PieceKind, text: string) => void, kind: PieceKind, text: string | undefined): void {
  if (text !== undefined && text !== '') emit(kind, text)
}

/** Mistral's `thinking`: a string, or an array of `{type: 'text', text}` parts. */
function thinkingText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (!Array.isArray(value)) return undefined
  let text = ''
  for (const part of value) if (isRecord(part)) text += stringField(part.text) ?? ''
  return text
}
