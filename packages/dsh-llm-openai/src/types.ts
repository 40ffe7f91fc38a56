/** Types of the OpenAI-compatible adapter: its options and the Chat Completions wire shapes it writes. */
import type { OpenAiWarning } from './warnings.ts'

/**
 * How reasoning blocks of earlier assistant messages are sent back to the provider.
 * - `'omit'`: never sent. For providers that reject or do not define a reasoning input field
 *   (OpenAI, most local servers, DeepSeek's first-generation `deepseek-reasoner`).
 * - `'reasoning_content'`: the message's reasoning text is sent as `reasoning_content` on the
 *   assistant message it belongs to. DeepSeek's thinking mode requires it after a tool call.
 */
export type ReasoningReplay = 'omit' | 'reasoning_content'

/** Which body field carries `LlmCallConfig.maxTokens`. */
export type MaxTokensField = 'max_tokens' | 'max_completion_tokens'

/** Options of `openAiCompatible`. Every field is read once, when the adapter is created. */
export interface OpenAiCompatibleOptions {
  /**
   * The API root; the adapter posts to `${baseURL}/chat/completions`. A trailing `/` is ignored; a
   * query string is kept after the joined path (`.../v1/chat/completions?api-version=...`).
   */
  readonly baseURL: string
  /**
   * The provider's name in failure and warning messages (e.g. `'groq'`). Default: the base URL, with
   * credentials in it redacted.
   */
  readonly name?: string
  /**
   * Where non-fatal surprises go: choices other than 0 (`n > 1`), content parts that cannot be mapped.
   * Called at most once per code and call. Default: `process.emitWarning` (else `console.warn`).
   */
  readonly onWarning?: (warning: OpenAiWarning) => void
  /**
   * Sent as `Authorization: Bearer <apiKey>`. Omit it for servers without auth; an empty or
   * blank string is refused (`INVALID_OPTIONS`), so an unset environment variable is noticed
   * rather than sent as no key: pass `...(key ? { apiKey: key } : {})` when the key is optional.
   */
  readonly apiKey?: string
  /** Extra request headers; they are written last, so they override the adapter's own. */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * Inactivity timeout in milliseconds: the longest wait for the response headers, and then between
   * any two reads of the body. Default 300000 (5 min). Not a cap on the length of a generation.
   */
  readonly timeoutMs?: number
  /** The `fetch` to call; defaults to the global (Node's built-in) `fetch`. */
  readonly fetch?: typeof fetch
  /** Reasoning replay policy; default `'omit'`. See `ReasoningReplay`. */
  readonly reasoningReplay?: ReasoningReplay
  /** Whether a request's `reasoningEffort` is sent as `reasoning_effort`; default `true`. */
  readonly sendReasoningEffort?: boolean
  /** Field for `maxTokens`; default `'max_tokens'` (OpenAI's reasoning models want the other). */
  readonly maxTokensField?: MaxTokensField
  /** Whether to ask for a usage chunk (`stream_options.include_usage`); default `true`. */
  readonly includeUsage?: boolean
  /**
   * Provider-specific top-level body fields (e.g. DeepSeek's `thinking`). Written after the mapped
   * fields, so a key here replaces the adapter's value for that key.
   */
  readonly extraBody?: Readonly<Record<string, unknown>>
}

/** Options of the `deepseek` preset: the generic options minus `baseURL`, which defaults to DeepSeek's. */
export interface DeepSeekOptions extends Omit<OpenAiCompatibleOptions, 'baseURL' | 'apiKey'> {
  readonly apiKey: string
  /** Default `https://api.deepseek.com`. */
  readonly baseURL?: string
}

/** A tool call as written into an assistant message of the request. */
export interface WireToolCall {
  readonly id: string
  readonly type: 'function'
  readonly function: { readonly name: string; readonly arguments: string }
}

/** A message of the Chat Completions request body. */
export type WireMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | {
      readonly role: 'assistant'
      readonly content: string | null
      readonly reasoning_content?: string
      readonly tool_calls?: readonly WireToolCall[]
    }
  | {
      readonly role: 'tool'
      readonly tool_call_id: string
      readonly content: string
    }

/** A tool of the Chat Completions request body. */
export interface WireTool {
  readonly type: 'function'
  readonly function: { readonly name: string; readonly description: string; readonly parameters: unknown }
}

/** The Chat Completions request body the adapter sends (before `extraBody`). */
export interface ChatCompletionBody {
  readonly model: string
  readonly messages: readonly WireMessage[]
  readonly tools?: readonly WireTool[]
  readonly temperature?: number
  readonly max_tokens?: number
  readonly max_completion_tokens?: number
  readonly stop?: readonly string[]
  readonly reasoning_effort?: string
  readonly stream: true
  readonly stream_options?: { readonly include_usage: boolean }
}
