import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-invariants',
    include: ['test/**/*.test.ts'],
    // Prints the run's invariant totals (every project whose files call installInvariantGuard).
    globalSetup: ['./src/vitest-global.ts'],
  },
})
