// Stress version of test/kill.test.ts: SIGKILLs a JSONL writer many times and checks after each kill
// that every acknowledged event loads. Needs the built packages (`pnpm -F dsh-llm build && pnpm -F
// dsh-session build`). Usage: node scripts/stress-kill.mjs [rounds=500] [parallel=4] [roundsPerSession=20]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertBuilt, killRound, verifyRound } from '../test/fixtures/kill-round.mjs'

const [rounds = 500, parallel = 4, perSession = 20] = process.argv.slice(2).map(Number)
assertBuilt()
const dir = mkdtempSync(join(tmpdir(), 'dsh-stress-kill-'))
const totals = { rounds: 0, acknowledged: 0, events: 0, torn: 0, repaired: 0, failures: [] }
const started = Date.now()
let next = 0

async function worker(w) {
  for (let session = 0; next < rounds; session++) {
    const id = `stress-${w}-${session}`
    let acked = []
    for (let round = 0; round < perSession && next < rounds; round++) {
      next++
      const minAcks = 1 + Math.floor(Math.random() * 6)
      const delayMs = Math.floor(Math.random() * 30)
      try {
        const fresh = await killRound({ dir, id, mode: round === 0 ? 'create' : 'open', minAcks, delayMs })
        acked = acked.concat(fresh)
        const result = await verifyRound({ dir, id, acked })
        totals.acknowledged += fresh.length
        totals.events = Math.max(totals.events, result.events)
        if (result.torn) totals.torn++
        if (result.repaired > 0) totals.repaired++
      } catch (error) {
        totals.failures.push(
          `${id} round ${round} (kill ${delayMs} ms after ${minAcks} acks): ${error.message}`,
        )
        break
      }
      totals.rounds++
      if (totals.rounds % 50 === 0) process.stdout.write(`${totals.rounds}/${rounds} rounds\n`)
    }
  }
}

try {
  await Promise.all(Array.from({ length: parallel }, (_, w) => worker(w)))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const seconds = ((Date.now() - started) / 1000).toFixed(1)
process.stdout.write(
  [
    `rounds killed and verified: ${totals.rounds} in ${seconds} s (${parallel} in parallel, ${perSession} kills per session)`,
    `acknowledged events checked: ${totals.acknowledged}`,
    `rounds whose kill left a torn final line (truncated on load): ${totals.torn}`,
    `rounds whose kill left a turn open (closed by repair): ${totals.repaired}`,
    `largest log: ${totals.events} events`,
    `failures: ${totals.failures.length}`,
    ...totals.failures.map((f) => `  ${f}`),
    '',
  ].join('\n'),
)
process.exitCode = totals.failures.length === 0 ? 0 : 1
