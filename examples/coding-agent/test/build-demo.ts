/**
 * Vitest global setup: builds `dist/main.js` before the tests run, because the demo test starts the
 * demo as a plain Node 20 subprocess (which resolves the dsh packages to their built `dist/`).
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'
import { demoBuild } from '../tsup.config.ts'

export async function setup(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url))
  await build({
    ...demoBuild,
    entry: { main: join(root, 'src/main.ts') },
    outDir: join(root, 'dist'),
    tsconfig: join(root, 'tsconfig.json'),
    silent: true,
  })
}
