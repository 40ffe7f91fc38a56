/**
 * The browser app bundles preact (MIT). The MIT license asks that its copyright and permission
 * notice go with every copy, so the bundle, and with it every page that inlines it, starts with it.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { buildViewData, loadAppBundle, renderPage } from 'dsh-viewer'
import { expect, it } from 'vitest'

const require = createRequire(import.meta.url)

it("the app bundle and every page carry preact's copyright and MIT permission notice", () => {
  const preact = require('preact/package.json') as { version: string; license: string }
  const license = readFileSync(join(dirname(require.resolve('preact/package.json')), 'LICENSE'), 'utf8')
  const copyright = license.split('\n').find((line) => line.startsWith('Copyright'))
  expect(preact.license).toBe('MIT')
  expect(copyright).toBeDefined()
  const bundle = loadAppBundle()
  const head = bundle.slice(0, bundle.indexOf('*/'))
  expect(head).toContain(`preact ${preact.version}`)
  expect(head).toContain(copyright)
  expect(head).toContain('The above copyright notice and this permission notice shall be included')
  const page = renderPage(buildViewData({ file: 'x.jsonl', events: [] }), bundle)
  expect(page).toContain(copyright)
})
