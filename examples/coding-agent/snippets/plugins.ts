// The plugins shown in docs/writing-a-plugin.md, verbatim between the region markers;
// test/plugins.test.ts mounts each one and pins what it does.
// #region imports
import type { Context } from 'cordis'
import type {} from 'dsh-agent-loop' // the agent loop's events and services, for the types
import {
  checkChunks,
  type LlmRequest,
  messageText,
  outsideLoopStep,
  type StreamChunk,
  type Usage,
  userText,
} from 'dsh-llm'
import type { ProjectionDefinition } from 'dsh-session'
// #endregion

// #region session-prefix
/** Opens every request with a catalog of what the user can ask for. */
export const SkillsCatalog = {
  name: 'skills-catalog',
  apply(ctx: Context) {
    ctx.on('agent/session-prefix', async (_input, next) => [
      userText('Skills: /review reviews a diff, /explain explains a file.', {
        kind: 'plugin',
        plugin: 'skills-catalog',
      }),
      ...(await next()),
    ])
  },
}
// #endregion

// #region pre-step-context
/** Adds the current branch to the first step of every turn, after the user's prompt. */
export const BranchContext = {
  name: 'branch-context',
  apply(ctx: Context, config: { branch: () => string }) {
    ctx.on('agent/pre-step', async (input, next) => {
      const decision = await next()
      if (decision.kind !== 'enter' || input.step !== 1) return decision
      const note = userText(`Current branch: ${config.branch()}`, {
        kind: 'plugin',
        plugin: 'branch-context',
      })
      return { kind: 'enter', messages: [...decision.messages, note] }
    })
  },
}
// #endregion

// #region pre-step-reject
/** Refuses a step whose input looks like it contains a secret; the turn ends `blocked`. */
export const SecretGuard = {
  name: 'secret-guard',
  apply(ctx: Context) {
    ctx.on(
      'agent/pre-step',
      async (input, next) => {
        if (input.messages.some((message) => /sk-[A-Za-z0-9]{16,}/.test(messageText(message)))) {
          return { kind: 'reject' }
        }
        return next()
      },
      { prepend: true }, // outermost: decide before any other pre-step listener runs
    )
  },
}
// #endregion

// #region system-prompt
/** Appends the user's preferences to whatever system prompt the agent was given. */
export const Preferences = {
  name: 'preferences',
  apply(ctx: Context, config: { preferences: string }) {
    ctx.on('agent/system-prompt', async (_input, next) => {
      const base = await next()
      return base === undefined ? config.preferences : `${base}\n\n${config.preferences}`
    })
  },
}
// #endregion

// #region request
/** Routes every step after the first to a cheaper model (each switch is logged as a `change` header). */
export const CheapFollowUps = {
  name: 'cheap-follow-ups',
  apply(ctx: Context, config: { model: string }) {
    ctx.on('agent/request', async (input, next) => {
      const call = await next()
      return input.step === 1 ? call : { ...call, model: config.model }
    })
  },
}
// #endregion

// #region request-error
/** Retries a provider's OVERLOADED failure up to three attempts; everything else follows the agent's policy. */
export const RetryOverloaded = {
  name: 'retry-overloaded',
  apply(ctx: Context) {
    ctx.on('agent/request-error', async (input, next) => {
      if (input.failure.code === 'OVERLOADED' && input.attempt < 3) {
        return { kind: 'retry', delayMs: input.failure.retryAfterMs ?? 1_000 }
      }
      return next()
    })
  },
}
// #endregion

// #region turn-stopping
/** Before a turn ends, asks once for a test run if the last answer does not say the tests pass. */
export const FinishCheck = {
  name: 'finish-check',
  apply(ctx: Context) {
    const nudged = new Set<string>()
    ctx.on('agent/turn-stopping', ({ agent, turn }) => {
      const last = agent.session.deriveMessages().at(-1)
      const key = `${agent.session.id}:${turn}`
      if (last?.role !== 'assistant' || messageText(last).includes('tests pass') || nudged.has(key)) return
      nudged.add(key)
      agent.steer(userText('Run the tests before you finish.', { kind: 'plugin', plugin: 'finish-check' }))
    })
  },
}
// #endregion

// #region pre-execute
/** Read-only mode: tools that change files are denied; the model sees the reason as an error result. */
export const ReadOnly = {
  name: 'read-only',
  apply(ctx: Context, config: { writers: readonly string[] }) {
    ctx.on('tools/pre-execute', async (input, next) => {
      if (config.writers.includes(input.tool.name))
        return { kind: 'deny', reason: 'the session is read-only' }
      return next()
    })
  },
}
// #endregion

// #region post-execute
/** Cuts long tool output and tells the model, in a context message after the step's tool results. */
export const OutputLimit = {
  name: 'output-limit',
  apply(ctx: Context, config: { maxChars: number }) {
    ctx.on('tools/post-execute', async (input, next) => {
      const output = await next()
      const text = messageText(output)
      if (text.length <= config.maxChars) return output
      const note = `The output of ${input.call.name} was cut to ${config.maxChars} of ${text.length} characters.`
      return {
        ...output,
        content: [{ type: 'text', text: text.slice(0, config.maxChars) }],
        additionalContexts: [userText(note, { kind: 'plugin', plugin: 'output-limit' })],
      }
    })
  },
}
// #endregion

// #region llm-stream
/**
 * Reports each model call's token usage. It only watches the chunks, so it hands the stream on
 * unchanged with a check attached instead of wrapping it in a generator of its own.
 */
export const UsageMeter = {
  name: 'usage-meter',
  apply(ctx: Context, config: { report: (usage: Usage, request: LlmRequest) => void }) {
    ctx.on('llm/stream', (request, next) =>
      checkChunks(next(), {
        chunk(chunk) {
          if (chunk.type === 'usage') config.report(chunk.usage, request)
          return undefined // nothing wrong with this chunk
        },
        end: () => undefined,
      }),
    )
  },
}
// #endregion

// #region projection
/** How often each tool was called in a session: a keyed fold over the log. */
export const toolCounts: ProjectionDefinition<Readonly<Record<string, number>>> = {
  key: 'tool-counts',
  init: () => ({}),
  apply(state, event) {
    if (event.type !== 'tool/call') return state // the same state: nothing changed
    return { ...state, [event.data.name]: (state[event.data.name] ?? 0) + 1 }
  },
}

export const ToolCounts = {
  name: 'tool-counts',
  inject: ['sessionProjections'],
  apply(ctx: Context) {
    ctx.sessionProjections.register(toolCounts)
  },
}
// #endregion

// #region llm-stream-side-call
/**
 * Asks a small classifier model about each loop request before it goes out, and reports the verdict.
 * The classifier call is the plugin's own: `outsideLoopStep` keeps it from being taken for the step's
 * request (the invariant checks count it as sent outside a step instead).
 */
export const TopicClassifier = {
  name: 'topic-classifier',
  inject: ['llm'],
  apply(ctx: Context, config: { model: string; report: (verdict: string) => void }) {
    ctx.on('llm/stream', (request, next) => {
      if (request.model === config.model) return next()
      return classified(ctx, request, config, next)
    })
  },
}

async function* classified(
  ctx: Context,
  request: LlmRequest,
  config: { model: string; report: (verdict: string) => void },
  next: () => AsyncIterable<StreamChunk>,
): AsyncGenerator<StreamChunk> {
  const question = { provider: request.provider, model: config.model, messages: request.messages.slice(-1) }
  let verdict = ''
  for await (const chunk of outsideLoopStep(() => ctx.llm.stream(question))) {
    if (chunk.type === 'text-delta') verdict += chunk.text
  }
  config.report(verdict)
  yield* next()
}
// #endregion
