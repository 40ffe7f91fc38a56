import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-fleet',
    include: ['test/**/*.test.ts'],
    // The PostgreSQL server of dsh-session-postgres's tests (embedded, or `DSH_TEST_PG_URL`).
    globalSetup: ['../dsh-session-postgres/test/global-setup.ts'],
  },
})
