/**
 * The agent's tools, registered as one Cordis plugin. Each tool has a zod schema (the loop converts it
 * to JSON Schema for the model and validates the model's arguments before `execute` runs).
 */
import type { Context } from 'cordis'
import type {} from 'dsh-agent-loop'
import { z } from 'zod'
import { evaluate } from './calculator.ts'
import { insideSandbox, lineCount, readSandboxFile, walk } from './sandbox.ts'

/** Configuration of the `SandboxTools` plugin. */
export interface SandboxToolsConfig {
  /** The sandbox folder every path is resolved against. */
  readonly root: string
}

const MAX_FILE_CHARS = 20_000

/** Registers `list_files`, `read_file` and `calculate`; they go away when the plugin unloads. */
export const SandboxTools = {
  name: 'sandbox-tools',
  inject: ['tools'],
  apply(ctx: Context, { root }: SandboxToolsConfig) {
    ctx.tools.register({
      name: 'list_files',
      description: 'List every file under a folder of the project (recursively), with its line count.',
      parameters: z.object({ path: z.string().describe('A folder relative to the project root, e.g. "."') }),
      async execute({ path }) {
        const files = await walk(root, insideSandbox(root, path))
        if (files.length === 0) return `${path} has no files`
        const lines = await Promise.all(
          files.map(async (file) => `${file} (${lineCount(await readSandboxFile(root, file))} lines)`),
        )
        return lines.join('\n')
      },
    })

    ctx.tools.register({
      name: 'read_file',
      description: 'Read a text file of the project.',
      parameters: z.object({ path: z.string().describe('A file path relative to the project root') }),
      async execute({ path }) {
        const text = await readSandboxFile(root, path)
        if (text.length <= MAX_FILE_CHARS) return text
        return `${text.slice(0, MAX_FILE_CHARS)}\n[... cut at ${MAX_FILE_CHARS} of ${text.length} characters]`
      },
    })

    ctx.tools.register({
      name: 'calculate',
      description: 'Evaluate an arithmetic expression with + - * / %, parentheses and unary minus.',
      parameters: z.object({ expression: z.string().describe('For example "12 * (7 + 5)"') }),
      execute({ expression }) {
        try {
          return String(evaluate(expression))
        } catch (error) {
          return { content: error instanceof Error ? error.message : String(error), isError: true }
        }
      },
    })
  },
}
