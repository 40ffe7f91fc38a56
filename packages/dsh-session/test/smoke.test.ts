import { expect, test } from 'vitest'
import { mountSessions, types, user } from './support.ts'

test('smoke', async () => {
  const app = await mountSessions()
  const session = await app.sessions.create()
  session.append('user/message', user('u1'))
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
  await session.flush()
  expect(types(session.events)).toEqual(['user/message', 'turn/start', 'turn/end'])
  expect(session.deriveMessages()).toHaveLength(1)
})
