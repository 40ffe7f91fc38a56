/**
 * MCP tool results as dsh content blocks. dsh-llm has text blocks only for tool output, so what MCP
 * sends as media or resources is rendered as a bracketed text line the model can read.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ContentBlock, TextBlock } from 'dsh-llm'

type McpContent = CallToolResult['content'][number]

function text(value: string): TextBlock {
  return { type: 'text', text: value }
}

/** The decoded size of base64 `data`, in bytes. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding)
}

function mime(value: string | undefined): string {
  return value === undefined || value === '' ? 'unknown type' : value
}

/**
 * One MCP content item as a dsh block: `text` as is; `image` and `audio` as
 * `[image: image/png, 1234 bytes, not shown]`; a resource link as
 * `[resource link: <name> <uri> (<mime>): <description>]`; an embedded text resource as a
 * `[resource: <uri> (<mime>)]` line followed by its text; an embedded binary resource as
 * `[resource: <uri> (<mime>), <n> bytes, not shown]`; anything else as `[<type> content: <JSON>]`.
 */
export function contentBlock(item: McpContent): TextBlock {
  switch (item.type) {
    case 'text':
      return text(item.text)
    case 'image':
    case 'audio':
      return text(`[${item.type}: ${mime(item.mimeType)}, ${base64Bytes(item.data)} bytes, not shown]`)
    case 'resource_link': {
      const label = item.title ?? item.name
      const about = item.description === undefined ? '' : `: ${item.description}`
      const type = item.mimeType === undefined ? '' : ` (${item.mimeType})`
      return text(`[resource link: ${label} ${item.uri}${type}${about}]`)
    }
    case 'resource': {
      const { resource } = item
      const head = `[resource: ${resource.uri} (${mime(resource.mimeType)})`
      if ('text' in resource && typeof resource.text === 'string') return text(`${head}]\n${resource.text}`)
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : ''
      return text(`${head}, ${base64Bytes(blob)} bytes, not shown]`)
    }
    default: {
      const unknown = item as { readonly type?: unknown }
      return text(`[${String(unknown.type)} content: ${JSON.stringify(item)}]`)
    }
  }
}

function sameJson(textValue: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(textValue)) === JSON.stringify(value)
  } catch {
    return false
  }
}

/**
 * The blocks of a tool result: each content item through `contentBlock`, then `structuredContent`
 * as one JSON text block unless a text item already carries the same JSON (servers are asked to
 * send both). A result with no content at all becomes one empty text block.
 */
export function resultBlocks(result: CallToolResult): ContentBlock[] {
  const blocks: ContentBlock[] = result.content.map(contentBlock)
  const structured = result.structuredContent
  if (
    structured !== undefined &&
    !result.content.some((item) => item.type === 'text' && sameJson(item.text, structured))
  ) {
    blocks.push(text(JSON.stringify(structured)))
  }
  if (blocks.length === 0) blocks.push(text(''))
  return blocks
}
