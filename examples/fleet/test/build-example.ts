/**
 * Vitest global setup: builds the example's `dist/host.js` and `dist/send.js`, because the test runs
 * them as plain Node 20 processes — which resolve the dsh packages to their built `dist/` (`pnpm test`
 * builds the packages first).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'

const PACKAGES = [
  'dsh-llm',
  'dsh-llm-openai',
  'dsh-session',
  'dsh-agent-loop',
  'dsh-session-postgres',
  'dsh-fleet',
]

export async function setup(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url))
  for (const name of PACKAGES) {
    if (!existsSync(join(root, '..', '..', 'packages', name, 'dist', 'index.js'))) {
      throw new Error(`the fleet example runs the built ${name}, which is missing: run \`pnpm build\` first`)
    }
  }
  await build({
    entry: { host: join(root, 'src/host.ts'), send: join(root, 'src/send.ts') },
    format: ['esm'],
    dts: false,
    clean: true,
    target: 'node20',
    // Every bare import stays external (resolved from the example's node_modules at run time).
    external: [/^[^./]/],
    outDir: join(root, 'dist'),
    tsconfig: join(root, 'tsconfig.json'),
    silent: true,
  })
}
