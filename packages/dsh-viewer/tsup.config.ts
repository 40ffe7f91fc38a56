import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { defineConfig } from 'tsup'

/**
 * The browser app bundles preact, which is MIT-licensed: its copyright and permission notice go at
 * the top of the bundle, and so into every page that inlines it.
 */
function preactNotice(): string {
  const require = createRequire(import.meta.url)
  const dir = dirname(require.resolve('preact/package.json'))
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }
  const license = readFileSync(join(dir, 'LICENSE'), 'utf8').trim()
  if (license.includes('*/')) throw new Error('preact LICENSE would end the banner comment')
  return `/*! This bundle includes preact ${version}:\n\n${license}\n*/`
}

export default defineConfig([
  {
    entry: { index: 'src/index.ts', cli: 'src/cli.ts' },
    format: ['esm'],
    dts: { entry: { index: 'src/index.ts' } },
    clean: true,
    sourcemap: false,
    target: 'node20',
  },
  {
    // The browser app: one IIFE with preact bundled in, inlined into every page (no CDN, works offline).
    entry: { app: 'src/app/main.tsx' },
    format: ['iife'],
    platform: 'browser',
    target: 'es2022',
    minify: true,
    noExternal: [/.*/],
    banner: { js: preactNotice() },
    esbuildOptions(options) {
      options.jsx = 'automatic'
      options.jsxImportSource = 'preact'
    },
  },
])
