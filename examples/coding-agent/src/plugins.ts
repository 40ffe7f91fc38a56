/**
 * Two plugins the way a plugin author writes them: one contributes to the session prefix (stable
 * opening context, recorded in the request header), one adds fresh context to each turn's first step.
 */
import type { Context } from 'cordis'
import type {} from 'dsh-agent-loop'
import { userText } from 'dsh-llm'
import { walk } from './sandbox.ts'

/**
 * `agent/session-prefix`: house rules every request of a loop instance starts with. The prefix is
 * composed once per instance, placed before the history and recorded only in the `request/header`, so
 * it never becomes part of the conversation and a restart may refresh it.
 */
export const ProjectNotes = {
  name: 'project-notes',
  apply(ctx: Context) {
    ctx.on('agent/session-prefix', async (_input, next) => [
      userText(
        'House rules for this project: look at files with the tools instead of guessing, ' +
          'cite file paths, keep answers short.',
        { kind: 'plugin', plugin: 'project-notes' },
      ),
      ...(await next()),
    ])
  },
}

/** Configuration of `WorkspaceContext`. */
export interface WorkspaceContextConfig {
  /** The sandbox folder to describe. */
  readonly root: string
  /** The file "open in the user's editor", reported with the context. */
  readonly openFile: string
}

/**
 * `agent/pre-step`: before the first step of every turn, adds a plugin-sourced context message to the
 * batch, right after the user's prompt. It wraps `next()`, so listeners registered after it (closer to
 * the loop) still decide; a `reject` from them stays a reject.
 */
export const WorkspaceContext = {
  name: 'workspace-context',
  apply(ctx: Context, config: WorkspaceContextConfig) {
    ctx.on('agent/pre-step', async (input, next) => {
      const decision = await next()
      if (decision.kind !== 'enter' || input.step !== 1) return decision
      const files = await walk(config.root, config.root)
      const context = userText(
        `Workspace: ${files.length} files in the project; the user's editor shows ${config.openFile}.`,
        { kind: 'plugin', plugin: 'workspace-context' },
      )
      return { kind: 'enter', messages: [...decision.messages, context] }
    })
  },
}
