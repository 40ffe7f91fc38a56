/**
 * Tool names the providers accept (`^[A-Za-z0-9_-]{1,64}$`), derived from the server and MCP tool
 * names alone so that the same tool gets the same name after a restart.
 */
import { createHash } from 'node:crypto'

/** The longest tool name providers accept. */
export const MAX_TOOL_NAME_LENGTH = 64

/** The longest server name `McpTools` accepts (the rest of the 64 characters is the tool's). */
export const MAX_SERVER_NAME_LENGTH = 32

/**
 * A valid server name: letters, digits and `-`, in runs joined by single `_`. No `__` and no
 * leading or trailing `_`, so the first `__` of a tool name always ends the server part.
 */
export const SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/

const INVALID_CHARS = /[^A-Za-z0-9_-]/g
const HASH_HEX = 8

/** The first `length` hex digits of the SHA-256 of `text`. */
function hash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length)
}

/**
 * The dsh tool name of MCP tool `tool` on server `server` (a name `SERVER_NAME` accepts):
 * `<server>__<tool>` when the tool's name is already made of `[A-Za-z0-9_-]` and the result fits in
 * 64 characters; otherwise every other character becomes `_`, the tool part is cut to fit and
 * `_<8 hex digits of SHA-256(tool)>` is appended — so two names that normalize alike stay apart.
 */
export function toolName(server: string, tool: string): string {
  const normalized = tool.replace(INVALID_CHARS, '_')
  const plain = `${server}__${normalized}`
  if (normalized === tool && tool.length > 0 && plain.length <= MAX_TOOL_NAME_LENGTH) return plain
  return suffixed(server, normalized, hash(tool, HASH_HEX))
}

function suffixed(server: string, normalized: string, suffix: string): string {
  const room = MAX_TOOL_NAME_LENGTH - server.length - 2 - suffix.length - 1
  return `${server}__${normalized.slice(0, Math.max(0, room))}_${suffix}`
}

/**
 * Names for all of one server's tools, in order: `toolName` for each, and for any name that would
 * still be shared by two tools (a hash coincidence between a plain and a suffixed name), a 16-digit
 * hash suffix for each of them instead. Deterministic in the list of tool names.
 */
export function toolNames(server: string, tools: readonly string[]): string[] {
  const names = tools.map((tool) => toolName(server, tool))
  const counts = new Map<string, number>()
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1)
  return names.map((name, i) => {
    if ((counts.get(name) ?? 0) < 2) return name
    const tool = tools[i] ?? ''
    return suffixed(server, tool.replace(INVALID_CHARS, '_'), hash(tool, 2 * HASH_HEX))
  })
}
