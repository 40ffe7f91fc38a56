import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    cli: 'src/cli.ts',
    vitest: 'src/vitest.ts',
    'vitest-setup': 'src/vitest-setup.ts',
    'vitest-global': 'src/vitest-global.ts',
  },
  format: ['esm'],
  dts: {
    entry: {
      index: 'src/index.ts',
      vitest: 'src/vitest.ts',
      'vitest-setup': 'src/vitest-setup.ts',
      'vitest-global': 'src/vitest-global.ts',
    },
  },
  clean: true,
  sourcemap: false,
  target: 'node20',
})
