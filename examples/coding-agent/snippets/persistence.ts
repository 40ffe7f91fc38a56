// The code shown in docs/persistence.md, verbatim between the region markers;
// test/persistence.test.ts runs it.
// #region imports
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, type SessionId, userText } from 'dsh-llm'
import { JsonlStorage, type Session, Sessions } from 'dsh-session'
// #endregion

// #region mount
/** One app over a folder of JSONL session files. */
export async function openApp(dir: string): Promise<Context> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir }) })
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  return app
}
// #endregion

// #region resume
/** Continues a stored session in this process: repair, a `resume` header, the turn, then release. */
export async function continueSession(app: Context, id: SessionId, prompt: string): Promise<void> {
  const agent = await app.agentLoop.resume(id, { provider: 'deepseek', model: 'deepseek-chat' })
  agent.send(userText(prompt))
  await agent.whenIdle()
  await agent.dispose() // flushes, closes the session and releases its lock
}
// #endregion

// #region fork
/** A new session holding everything before `session`'s last turn: try that turn again, differently. */
export async function forkBeforeLastTurn(app: Context, session: Session): Promise<Session> {
  const lastTurn = session.events.findLast((event) => event.type === 'turn/start')
  return app.sessions.fork(session, lastTurn?.seq ?? session.seq)
}
// #endregion

// #region list
/** Every stored session, oldest first, with its parent when it is a fork. */
export async function describeSessions(app: Context): Promise<string[]> {
  const { sessions } = await app.sessions.list()
  return sessions.map(({ sessionId, parent }) =>
    parent === undefined
      ? sessionId
      : `${sessionId} (fork of ${parent.sessionId} at seq ${parent.seedLength})`,
  )
}
// #endregion
