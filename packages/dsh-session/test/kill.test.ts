import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from './fixtures/events.ts'
import { type Acked, assertBuilt, killRound, verifyRound } from './fixtures/kill-round.mjs'

// The writer child runs the built package (dist/); `pnpm test` builds before running vitest.
beforeAll(() => assertBuilt())

const { dir, dispose } = tempDir()
afterAll(() => dispose())

/** Kills per session; `DSH_KILL_ROUNDS` raises it for a longer soak (the default keeps `pnpm test` short). */
const rounds = Number(process.env.DSH_KILL_ROUNDS ?? 10)

describe('a writer killed with SIGKILL while appending', () => {
  it(
    `loses no acknowledged event, ${5 * rounds} times (5 sessions in parallel, each killed and reopened ${rounds} times)`,
    async () => {
      const sessions = await Promise.all([0, 1, 2, 3, 4].map((s) => crashLoop(`kill-${s}`, rounds)))
      // The kills landed while appending: each round saw acknowledgements, and some left a turn open.
      expect(sessions.every((s) => s.roundsWithAcks === rounds)).toBe(true)
      expect(sessions.reduce((sum, s) => sum + s.repairedRounds, 0)).toBeGreaterThan(0)
    },
    60_000 + rounds * 6_000,
  )
})

/** Kills and reopens one session `rounds` times, checking after each kill. */
async function crashLoop(
  id: string,
  rounds: number,
): Promise<{ roundsWithAcks: number; repairedRounds: number }> {
  let everAcked: Acked[] = []
  let repairedRounds = 0
  let roundsWithAcks = 0
  for (let round = 0; round < rounds; round++) {
    const minAcks = 1 + Math.floor(Math.random() * 4)
    const delayMs = Math.floor(Math.random() * 20)
    const acked = await killRound({ dir, id, mode: round === 0 ? 'create' : 'open', minAcks, delayMs })
    // Acknowledgements of earlier rounds must survive later crashes and repairs too.
    everAcked = everAcked.concat(acked)
    const result = await verifyRound({ dir, id, acked: everAcked })
    expect(result.events).toBeGreaterThan(acked.at(-1)?.seq ?? -1)
    if (result.repaired > 0) repairedRounds++
    if (acked.length > 0) roundsWithAcks++
  }
  return { roundsWithAcks, repairedRounds }
}
