/**
 * The person at the keyboard, simulated so the demo runs unattended: they steer the agent while its
 * first tool runs, and cancel the second turn once it has streamed a little. Both happen at fixed
 * points of the run, so the transcript is deterministic.
 */
import type { Context } from 'cordis'
import type {} from 'dsh-agent-loop'
import { userText } from 'dsh-llm'
import type { Session } from 'dsh-session'
import type { Transcript } from './transcript.ts'

/** Configuration of `SimulatedUser`. */
export interface SimulatedUserConfig {
  readonly transcript: Transcript
  /** Sent with `agent.steer` when the first tool call of turn `steerInTurn` is about to run. */
  readonly steering: string
  readonly steerInTurn: number
  /** The turn cancelled once `cancelAfterChars` characters of text have streamed (or a tool starts). */
  readonly cancelInTurn: number
  readonly cancelAfterChars: number
  readonly cancelCause: string
}

/** Steers once and cancels once, as configured. */
export const SimulatedUser = {
  name: 'simulated-user',
  inject: ['agentLoop'],
  apply(ctx: Context, config: SimulatedUserConfig) {
    let steered = false
    // Steering mid-turn: the message waits in the inbox's next-step list and enters the next step.
    ctx.on('tools/pre-execute', async (input, next) => {
      if (!steered && input.turn === config.steerInTurn) {
        steered = true
        config.transcript.line(`    (you type while the tool runs) ${config.steering}`)
        input.agent.steer(userText(config.steering))
      }
      return next()
    })

    let streamed = 0
    let cancelled = false
    const press = (session: Session): void => {
      cancelled = true
      // Nothing may be appended from inside a session listener: cancel right after it returns.
      queueMicrotask(() => {
        config.transcript.line(`    (you press Ctrl-C)`)
        ctx.agentLoop.agentFor(session.id)?.cancel(config.cancelCause)
      })
    }
    ctx.on('session/chunk', (session, _seq, _time, turn, _step, chunk) => {
      if (cancelled || turn !== config.cancelInTurn) return
      if (chunk.type === 'text-delta') streamed += chunk.text.length
      if (streamed >= config.cancelAfterChars) press(session)
    })
    ctx.on('session/event', (session, event) => {
      if (cancelled || !('turn' in event.data) || event.data.turn !== config.cancelInTurn) return
      if (streamed >= config.cancelAfterChars || event.type === 'tool/call') press(session)
    })
  },
}
