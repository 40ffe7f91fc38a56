/** The fixture file: every recorded exchange, in the order the requests were made, as readable JSON. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { StreamChunk } from 'dsh-llm'
import { z } from 'zod'
import type { CanonicalRequest } from './canonical.ts'
import { ReplayFixtureError } from './errors.ts'

/** The value of a fixture's `format` field. */
export const FIXTURE_FORMAT = 'dsh-replay/1'

/** One request and the response the model gave to it. */
export interface Exchange {
  /** `requestKey(request)`: what a replayed request is looked up by. */
  readonly key: string
  /** The request in canonical form. */
  readonly request: CanonicalRequest
  /** The stream chunks the model answered with, in order. */
  readonly chunks: readonly StreamChunk[]
}

/** A whole fixture file. */
export interface Fixture {
  /** Always `FIXTURE_FORMAT`. */
  readonly format: typeof FIXTURE_FORMAT
  /** Every exchange, in the order the requests were made. */
  readonly exchanges: readonly Exchange[]
}

const fixtureSchema = z.object({
  format: z.literal(FIXTURE_FORMAT),
  exchanges: z.array(
    z.object({
      key: z.string().startsWith('sha256:'),
      request: z.record(z.string(), z.json()),
      chunks: z.array(z.looseObject({ type: z.string() })),
    }),
  ),
})

/**
 * Reads and checks the fixture at `path`. Throws `ReplayFixtureError` (code `FIXTURE_INVALID`) naming
 * the path when it is missing, not JSON, or not a `dsh-replay/1` fixture (with the zod issue's path).
 */
export function readFixture(path: string): Fixture {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (cause) {
    throw new ReplayFixtureError(
      path,
      `replay fixture ${path} cannot be read (record it first with DSH_REPLAY=record)`,
      { cause },
    )
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    throw new ReplayFixtureError(path, `replay fixture ${path} is not JSON: ${String(cause)}`, { cause })
  }
  const parsed = fixtureSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue === undefined ? '' : ` at ${issue.path.join('.') || '(root)'}: ${issue.message}`
    throw new ReplayFixtureError(path, `replay fixture ${path} is not a ${FIXTURE_FORMAT} fixture${where}`)
  }
  return parsed.data as unknown as Fixture
}

/** Writes `fixture` to `path` (creating its folder) as indented JSON with a final newline. */
export function writeFixture(path: string, fixture: Fixture): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${JSON.stringify(fixture, null, 2)}\n`)
}
