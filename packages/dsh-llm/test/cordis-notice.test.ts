/**
 * dsh-llm ships cordis's declarations, rearranged, in `dist/cordis.d.ts` (see
 * `scripts/cordis-types.mjs`). cordis is MIT-licensed, and the MIT license asks that its copyright
 * and permission notice travel with every copy: the generated file carries both at its top.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)

describe('dist/cordis.d.ts', () => {
  it("carries cordis's copyright and MIT permission notice", () => {
    const cordis = require('cordis/package.json') as { version: string; author: string; license: string }
    const text = readFileSync(new URL('../dist/cordis.d.ts', import.meta.url), 'utf8')
    const header = text.slice(0, text.indexOf('declare module'))
    expect(cordis.license).toBe('MIT')
    expect(header).toContain(`cordis ${cordis.version}`)
    expect(header).toContain(`Copyright (c) ${cordis.author}`)
    expect(header).toContain('Permission is hereby granted, free of charge, to any person obtaining a copy')
    expect(header).toContain(
      'The above copyright notice and this permission notice shall be included in all copies or substantial portions of the Software.',
    )
    expect(header).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND')
  })
})
