/** Runs one measured job in a fresh Node process and returns what it reported. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Job, JobResult } from './child.ts'

const MAIN = fileURLToPath(new URL('./main.js', import.meta.url))
const MARK = 'BENCH-RESULT '

/** Options of one child run. */
export interface ChildOptions {
  /** Run the child with `--expose-gc` (needed for heap figures). */
  readonly exposeGc?: boolean
}

/**
 * Spawns `node dist/main.js --child <job>` and resolves with the job's result. With the
 * `BENCH_CPU_PROF` environment variable set to a directory, every child writes a CPU profile there.
 * Rejects with the child's stderr when it exits non-zero or reports nothing.
 */
export function runInChild<J extends Job>(job: J, options: ChildOptions = {}): Promise<JobResult<J>> {
  const args: string[] = []
  if (options.exposeGc === true) args.push('--expose-gc')
  const profDir = process.env.BENCH_CPU_PROF
  if (profDir !== undefined && profDir !== '') args.push('--cpu-prof', `--cpu-prof-dir=${profDir}`)
  args.push('--enable-source-maps', MAIN, '--child', JSON.stringify(job))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text
    })
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      err += text
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith(MARK))
      if (code !== 0 || line === undefined) {
        const detail = err.trim().split('\n').slice(-6).join('\n')
        const how = code === null ? `was killed (${signal})` : `exited with ${code}`
        reject(new Error(`child ${job.kind} ${how}${detail === '' ? '' : `: ${detail}`}`))
        return
      }
      resolve(JSON.parse(line.slice(MARK.length)) as JobResult<J>)
    })
  })
}

/** Child side: prints the job's result in the form `runInChild` reads. */
export function reportResult(result: unknown): void {
  process.stdout.write(`${MARK}${JSON.stringify(result)}\n`)
}
