import { defineConfig } from 'tsup'

/** Two small Node 20 entry points; the dsh packages stay external (their dist). */
export default defineConfig({
  entry: { host: 'src/host.ts', send: 'src/send.ts' },
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
})
