/**
 * The demo's sandbox: a tiny project on disk that the tools may read, and the path check that keeps
 * every tool inside it.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'

/** The files the demo writes into a fresh sandbox (paths use `/`). */
export const SANDBOX_FILES: Readonly<Record<string, string>> = {
  'README.md': [
    '# tiny-calc',
    '',
    'A tiny arithmetic library: `add` and `multiply`, nothing else.',
    'Run the tests with `node --test`.',
    '',
  ].join('\n'),
  'src/add.ts': [
    '/** Adds two numbers. */',
    'export function add(a: number, b: number): number {',
    '  return a + b',
    '}',
    '',
  ].join('\n'),
  'src/multiply.ts': [
    "import { add } from './add.ts'",
    '',
    '/** Multiplies by repeated addition. */',
    'export function multiply(a: number, b: number): number {',
    '  let total = 0',
    '  for (let i = 0; i < b; i++) total = add(total, a)',
    '  return total',
    '}',
    '',
  ].join('\n'),
}

/** Writes `SANDBOX_FILES` under `root` (which should be empty or absent). */
export async function createSandbox(root: string): Promise<void> {
  for (const [path, text] of Object.entries(SANDBOX_FILES)) {
    const file = join(root, ...path.split('/'))
    await mkdir(join(file, '..'), { recursive: true })
    await writeFile(file, text)
  }
}

/**
 * Resolves `path` (relative, `/`-separated) inside `root`. Throws an `Error` a model can read when the
 * path is absolute or climbs out of the sandbox.
 */
export function insideSandbox(root: string, path: string): string {
  const full = resolve(root, path)
  const rel = relative(root, full)
  if (isAbsolute(path) || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new Error(`${JSON.stringify(path)} is outside the sandbox; use a path relative to its root`)
  }
  return full
}

/** The number of lines of `text` (a final newline does not start another line). */
export function lineCount(text: string): number {
  if (text === '') return 0
  const lines = text.split('\n').length
  return text.endsWith('\n') ? lines - 1 : lines
}

/** Every file under `dir` (recursively), as `/`-separated paths relative to `root`, sorted. */
export async function walk(root: string, dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await walk(root, full)))
    else if (entry.isFile()) out.push(relative(root, full).split(sep).join('/'))
  }
  return out.sort()
}

/** Reads a sandbox file as UTF-8. */
export function readSandboxFile(root: string, path: string): Promise<string> {
  return readFile(insideSandbox(root, path), 'utf8')
}
