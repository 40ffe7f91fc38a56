/** Which files a CLI call names: files as given, directories searched for `.jsonl` session files. */
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** One path argument resolved: the files to check, or why it names none. */
export type ResolvedPath =
  | { readonly kind: 'files'; readonly files: readonly string[]; readonly notice?: string }
  | { readonly kind: 'error'; readonly path: string; readonly message: string }

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await walk(path, out)
    else if (entry.isFile() && entry.name.endsWith('.jsonl')) out.push(path)
  }
}

/**
 * Resolves `path`: a file is checked as given (whatever its name); a directory yields every `*.jsonl`
 * file under it, recursively, in name order — none, with a notice, for a directory holding no
 * `.jsonl` file (a new project's sessions folder). A path that does not exist or cannot be listed
 * resolves to an error naming it.
 */
export async function resolvePath(path: string): Promise<ResolvedPath> {
  try {
    const info = await stat(path)
    if (!info.isDirectory()) return { kind: 'files', files: [path] }
    const files: string[] = []
    await walk(path, files)
    if (files.length === 0) {
      return {
        kind: 'files',
        files,
        notice: `${path}: the directory holds no .jsonl session files yet; nothing to check there`,
      }
    }
    return { kind: 'files', files }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    return { kind: 'error', path, message: `${path}: cannot read: ${why} (STORAGE)` }
  }
}
