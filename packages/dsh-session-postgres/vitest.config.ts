import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-session-postgres',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
  },
})
