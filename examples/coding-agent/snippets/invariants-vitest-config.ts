// A project's own vitest.config.ts, as docs/invariants-in-ci.md shows it.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Every test file runs with the invariant guard: a test fails if a check found a violation.
    setupFiles: ['dsh-invariants/vitest-setup'],
    // Prints one line at the end of the run: how much the checks re-derived and checked.
    globalSetup: ['dsh-invariants/vitest-global'],
  },
})
