import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-example-fleet',
    include: ['test/**/*.test.ts'],
    // A PostgreSQL server (the postgres package's test server, or `DSH_TEST_PG_URL`), then the
    // example's `dist/` for the subprocess test.
    globalSetup: ['../../packages/dsh-session-postgres/test/global-setup.ts', 'test/build-example.ts'],
  },
})
