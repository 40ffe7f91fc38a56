/** Runs one measured job in a fresh Node process and returns what it reported. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Job, JobResult } from './child.ts'

/** The bench's entry point (built: this module is bundled into `dist/` beside it). */
export const MAIN = fileURLToPath(new URL('./main.js', import.meta.url))
const MARK = 'BENCH-RESULT '

/** Options of one child run. */
export interface ChildOptions {
  /** Run the child with `--expose-gc` (needed for heap figures). */
  readonly exposeGc?: boolean
  /** The Node executable to run it on (another runtime's, see `--beside`); default: this process's. */
  readonly node?: string
}

/**
 * Spawns `node dist/main.js --child <job>` and resolves with the job's result. With the
 * `BENCH_CPU_PROF` environment variable set to a directory, every child writes a CPU profile there;
 * with `BENCH_SOURCE_MAPS=1` every child runs with `--enable-source-maps` (stack traces that name
 * `src/` lines, at a cost to the measured step).
 * Rejects with the child's stderr when it exits non-zero or reports nothing.
 */
export function runInChild<J extends Job>(job: J, options: ChildOptions = {}): Promise<JobResult<J>> {
  const args: string[] = []
  if (options.exposeGc === true) args.push('--expose-gc')
  const profDir = process.env.BENCH_CPU_PROF
  if (profDir !== undefined && profDir !== '') args.push('--cpu-prof', `--cpu-prof-dir=${profDir}`)
  // Source maps only on request: with them enabled, a child's steps run measurably slower, and by a
  // different amount for each harness (Agent Note 2026-12-02-bench-children-without-source-maps.md).
  if (process.env.BENCH_SOURCE_MAPS === '1') args.push('--enable-source-maps')
  args.push(MAIN, '--child', JSON.stringify(job))
  return runNode(args, options.node).then(({ code, signal, stdout, stderr }) => {
    const line = stdout.split('\n').find((l) => l.startsWith(MARK))
    if (code !== 0 || line === undefined) {
      const detail = stderr.trim().split('\n').slice(-6).join('\n')
      const how = code === null ? `was killed (${signal})` : `exited with ${code}`
      throw new Error(`child ${job.kind} ${how}${detail === '' ? '' : `: ${detail}`}`)
    }
    return JSON.parse(line.slice(MARK.length)) as JobResult<J>
  })
}

/** How a `node` process ended and everything it wrote. */
export interface NodeRun {
  /** Its exit code, or `null` when a signal ended it. */
  readonly code: number | null
  /** The signal that ended it, if one did. */
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `node ...args` (stdin ignored) to its end on `node` (default: this process's executable);
 * rejects only when the process cannot start.
 */
export function runNode(args: readonly string[], node: string = process.execPath): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text
    })
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

/** Child side: prints the job's result in the form `runInChild` reads. */
export function reportResult(result: unknown): void {
  process.stdout.write(`${MARK}${JSON.stringify(result)}\n`)
}
