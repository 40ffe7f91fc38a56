import { defineConfig, type Options } from 'tsup'

/** The demo is an app: one ESM entry for plain Node 20; the dsh packages stay external (their dist). */
export const demoBuild: Options = {
  entry: { main: 'src/main.ts' },
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
}

export default defineConfig(demoBuild)
