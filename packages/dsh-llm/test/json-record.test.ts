import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isRecord } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

describe('isRecord', () => {
  it('accepts objects that are not arrays, whatever their prototype', () => {
    expect([{}, { a: 1 }, Object.create(null), new Date(0), JSON.parse('{"x":[1]}')].map(isRecord)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ])
  })

  it('refuses null, arrays and every primitive', () => {
    expect([null, undefined, [], [1], 'a', 0, true, 1n, Symbol('s')].map(isRecord)).toEqual(
      Array(9).fill(false),
    )
  })

  it('is the only hand-written copy of the test in any package source', () => {
    const packages = fileURLToPath(new URL('../../', import.meta.url))
    const copy =
      /typeof (\w+) === 'object' && \1 !== null && !Array\.isArray\(\1\)|(\w+) === null \|\| typeof \2 !== 'object' \|\| Array\.isArray\(\2\)|typeof (\w+) !== 'object' \|\| \3 === null \|\| Array\.isArray\(\3\)/
    const found: string[] = []
    for (const pkg of readdirSync(packages)) {
      const src = join(packages, pkg, 'src')
      let files: string[]
      try {
        files = readdirSync(src, { recursive: true, encoding: 'utf8' })
      } catch {
        continue
      }
      for (const file of files) {
        if (!file.endsWith('.ts')) continue
        if (copy.test(readFileSync(join(src, file), 'utf8'))) found.push(`${pkg}/src/${file}`)
      }
    }
    expect(found).toEqual(['dsh-llm/src/json-record.ts'])
  })
})
