import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-llm-openai',
    include: ['test/**/*.test.ts'],
    // Every test file fails on an unexpected invariant violation (the stream grammar of the adapter's output).
    setupFiles: ['dsh-invariants/vitest-setup'],
  },
})
