/** Context windows of known models, and the lookup that resolves a model id to its window. */

/**
 * Context windows (input + output tokens) of a few widely used models, by model id or id prefix.
 * A starting point, not a catalog: pass `contextWindows` for anything else.
 */
export const KNOWN_CONTEXT_WINDOWS: Readonly<Record<string, number>> = Object.freeze({
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-5': 400_000,
  o3: 200_000,
  'o4-mini': 200_000,
  'claude-': 200_000,
  'deepseek-chat': 128_000,
  'deepseek-reasoner': 128_000,
  'gemini-2.5-pro': 1_048_576,
  'gemini-2.5-flash': 1_048_576,
  'qwen3-': 131_072,
})

/** The window used for a model no table entry matches, unless configured. */
export const DEFAULT_CONTEXT_WINDOW = 128_000

/**
 * The context window of `model`: an exact entry of `table` (user entries over `KNOWN_CONTEXT_WINDOWS`),
 * else the longest entry that is a prefix of the id, else `fallback`.
 */
export function contextWindowFor(
  model: string,
  table: Readonly<Record<string, number>> = {},
  fallback: number = DEFAULT_CONTEXT_WINDOW,
): number {
  const merged: Record<string, number> = { ...KNOWN_CONTEXT_WINDOWS, ...table }
  const exact = merged[model]
  if (exact !== undefined) return exact
  let best: string | undefined
  for (const key of Object.keys(merged)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? fallback : (merged[best] ?? fallback)
}
