import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-example-coding-agent',
    include: ['test/**/*.test.ts'],
    // Builds dist/main.js before the tests run: the demo test starts it as a plain Node subprocess.
    globalSetup: ['test/build-demo.ts'],
  },
})
