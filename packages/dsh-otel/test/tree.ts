/** Span tree helpers: the exported spans as a nested, ordered, comparable structure. */
import type { ReadableSpan } from '@opentelemetry/sdk-trace'

/** One span as the tests compare it. */
export interface SpanNode {
  readonly name: string
  readonly status?: string
  readonly attributes: Record<string, unknown>
  readonly children?: SpanNode[]
}

function order(span: ReadableSpan): number {
  const seq = span.attributes['dsh.seq'] ?? span.attributes['dsh.request.log_length']
  return typeof seq === 'number' ? seq : -1
}

/**
 * The spans as trees rooted at spans without a parent among them, children ordered by the log seq
 * that opened them (a model request by the log length it was derived from). Status appears only when
 * it is not UNSET, as `ERROR: message`.
 */
export function spanTree(spans: readonly ReadableSpan[]): SpanNode[] {
  const ids = new Set(spans.map((s) => s.spanContext().spanId))
  const childrenOf = (parent: string | undefined) =>
    spans
      .filter((s) => {
        const id = s.parentSpanContext?.spanId
        return parent === undefined ? id === undefined || !ids.has(id) : id === parent
      })
      .sort((a, b) => order(a) - order(b))
      .map((s): SpanNode => {
        const children = childrenOf(s.spanContext().spanId)
        return {
          name: s.name,
          ...(s.status.code === 2 ? { status: `ERROR: ${s.status.message ?? ''}` } : {}),
          attributes: { ...s.attributes },
          ...(children.length === 0 ? {} : { children }),
        }
      })
  return childrenOf(undefined)
}

/**
 * The tree as lines: two spaces of indent per level, then `name`, ` [ERROR: message]` when errored,
 * then ` | key=value` for every attribute in key order (values as JSON).
 */
export function spanOutline(spans: readonly ReadableSpan[]): string[] {
  const lines: string[] = []
  const walk = (node: SpanNode, depth: number) => {
    const attributes = Object.keys(node.attributes)
      .sort()
      .map((key) => `${key}=${JSON.stringify(node.attributes[key])}`)
      .join(' ')
    lines.push(
      `${'  '.repeat(depth)}${node.name}${node.status === undefined ? '' : ` [${node.status}]`} | ${attributes}`,
    )
    for (const child of node.children ?? []) walk(child, depth + 1)
  }
  for (const root of spanTree(spans)) walk(root, 0)
  return lines
}
