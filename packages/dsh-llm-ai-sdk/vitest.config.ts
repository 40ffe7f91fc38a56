import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-llm-ai-sdk',
    include: ['test/**/*.test.ts'],
    // Every test file fails on an unexpected invariant violation (the stream grammar of the adapter's output).
    setupFiles: ['dsh-invariants/vitest-setup'],
    // The PostgreSQL replay test runs on dsh-session-postgres's private embedded server.
    globalSetup: ['../dsh-session-postgres/test/global-setup.ts'],
    // eventsource-parser (under the AI SDK) publishes a `source` condition pointing at its TypeScript:
    // run it through vite rather than Node, which cannot load `.ts`.
    server: { deps: { inline: [/eventsource-parser/, /@ai-sdk\//] } },
  },
})
