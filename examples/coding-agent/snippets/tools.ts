// The tools shown in docs/tools.md, verbatim between the region markers; test/tools.test.ts runs them.
// #region imports
import { readFile } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import type { Context } from 'cordis'
import type {} from 'dsh-agent-loop'
import { z } from 'zod'
// #endregion

// #region read-file
/** `read_file`: reads a text file under `root`, refusing paths that leave it. */
export const ReadFileTool = {
  name: 'read-file-tool',
  inject: ['tools'],
  apply(ctx: Context, config: { root: string }) {
    ctx.tools.register({
      name: 'read_file',
      description: 'Read a UTF-8 text file of the project.',
      parameters: z.object({
        path: z.string().describe('A path relative to the project root'),
        maxChars: z.number().int().positive().default(20_000),
      }),
      async execute({ path, maxChars }, { signal }) {
        const full = resolve(config.root, path)
        const inside = relative(config.root, full)
        if (inside.startsWith('..') || isAbsolute(inside)) {
          return { content: `${path} is outside the project`, isError: true }
        }
        const text = await readFile(full, { encoding: 'utf8', signal })
        return text.slice(0, maxChars)
      },
    })
  },
}
// #endregion

// #region exclusive
/** `run_tests` changes shared state (a build folder), so it runs alone: never next to another tool. */
export const RunTestsTool = {
  name: 'run-tests-tool',
  inject: ['tools'],
  apply(ctx: Context, config: { runTests: (signal: AbortSignal) => Promise<string> }) {
    ctx.tools.register({
      name: 'run_tests',
      description: 'Run the test suite and report the result.',
      parameters: z.object({}),
      mode: 'exclusive',
      execute: (_args, { signal }) => config.runTests(signal),
    })
  },
}
// #endregion

// #region conclude
/** `finish`: the model hands in its answer; the turn ends after this step without another model call. */
export const FinishTool = {
  name: 'finish-tool',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register({
      name: 'finish',
      description: 'Call when the task is done, with a one-line summary.',
      parameters: z.object({ summary: z.string() }),
      execute: ({ summary }) => ({ content: `Recorded: ${summary}`, concludeTurn: true }),
    })
  },
}
// #endregion
