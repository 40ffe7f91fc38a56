import { defineProject } from 'vitest/config'

export default defineProject({
  test: { name: 'dsh-bench', include: ['test/**/*.test.ts'] },
})
