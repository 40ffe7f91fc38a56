import { defineConfig } from 'vitest/config'

/**
 * The browser end-to-end test. Not a workspace project, so `pnpm test` never runs it: `.ci/run` runs
 * it with `pnpm --filter dsh-viewer e2e` after installing Debian's chromium.
 */
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: { name: 'dsh-viewer-e2e', include: ['e2e/**/*.e2e.ts'], testTimeout: 180_000, hookTimeout: 180_000 },
})
