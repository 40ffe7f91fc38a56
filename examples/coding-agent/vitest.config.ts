import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-example-coding-agent',
    include: ['test/**/*.test.ts'],
    // Every test file runs with the invariant guard: a test fails if any check found a violation.
    setupFiles: ['dsh-invariants/vitest-setup'],
    // Builds the demo for the subprocess test; prints the run's invariant totals at the end.
    globalSetup: ['test/build-demo.ts', 'dsh-invariants/vitest-global'],
  },
})
