import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { JsonlStorage, MemoryStorage } from 'dsh-session'
import { contractEvent, describeStorageContract } from 'dsh-session/testing'
import { deadLockOwner } from './fixtures/dead-lock.ts'
import { tempDir } from './fixtures/events.ts'

describeStorageContract('MemoryStorage', () => {
  // Every instance shares the anchor's sessions, as a second process shares a database.
  const anchor = new MemoryStorage()
  return { open: (options) => new MemoryStorage({ ...options, sharing: anchor }) }
})

describeStorageContract(
  'JsonlStorage',
  () => {
    const { dir, dispose } = tempDir()
    return { dir, open: (options) => new JsonlStorage({ dir, ...options }), cleanup: dispose }
  },
  {
    tearTail: ({ dir }, sessionId) => {
      const line = JSON.stringify(contractEvent(1_000_000))
      writeFileSync(join(dir, `${sessionId}.jsonl`), line.slice(0, line.length >> 1), { flag: 'a' })
    },
    abandonLease: ({ dir }, _holder, sessionId) => deadLockOwner(join(dir, `${sessionId}.lock`)),
    plantBadEntry: ({ dir }) => {
      const path = join(dir, 'foreign.jsonl')
      writeFileSync(path, '{"not":"a session"}\n')
      return path
    },
  },
)
