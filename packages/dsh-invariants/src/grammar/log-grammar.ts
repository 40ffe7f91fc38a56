/**
 * The log grammar: which event may follow which. Checked online before each event commits (mounted by
 * `installLogGrammar`, `online/log-guard.ts`) and offline over a whole log by `checkSessionLog`.
 */
import type { StreamChunk, ToolResultBlock } from 'dsh-llm'
import {
  applyInboxSplice,
  emptyInbox,
  type InboxState,
  type Session,
  type SessionEvent,
  type SessionParent,
  sessionEventDefinition,
} from 'dsh-session'
import type { Violation } from '../types.ts'
import type { CallState, StepState, TurnState } from './log-state.ts'
import { CallAssembly } from './message-chunks.ts'

/** What the grammar knows about where the log came from. */
export interface LogOrigin {
  /**
   * The fork provenance: `session/end-seed` must then stand exactly at `parent.seedLength`. `null` says
   * the log is known not to be a fork (no `session/end-seed` allowed); `undefined` says it is unknown
   * (`session/end-seed` between turns is allowed anywhere, more than once: a fork of a fork carries
   * its parent's marker in its seed). A known fork's seed may hold its ancestors' markers too.
   */
  readonly parent?: SessionParent | null
}

/**
 * The grammar as a state machine. `check(event)` returns the violations `event` would commit
 * (empty when it fits) without changing the state; `apply(event)` advances past an event, tolerantly,
 * so a checker can keep going after a violation and report the next one.
 *
 * Rules, by event type (every event: `seq` is the next in a run contiguous from 0):
 * - `turn/start`: only between turns; numbers turn `last + 1`.
 * - `turn/end`: closes the open turn it names; no step may be open.
 * - `step/start`: inside the open turn it names, with no step open; numbers step `last + 1` (from 1).
 * - `step/end`: closes the open step it names; every tool call its `assistant/message`s proposed has
 *   been answered by a `tool/result`.
 * - `request/header`: inside an open turn.
 * - `assistant/chunk`, `assistant/message`, `tool/call`, `tool/result`, `request/retry`: inside the
 *   open step they name. The first `assistant/chunk` of the log needs a `request/header` before it.
 * - `tool/call`: only for a call a tool-call block of the step's `assistant/message` proposed, once,
 *   and not after its result.
 * - `tool/result`: only for a call of the open step (proposed, or announced by `tool/call`) that has
 *   no result yet; its block's `toolCallId` and its source's `callId` agree. A result for a call
 *   with no `tool/call` logged answers a call that never started (crash repair's `TOOL_NOT_STARTED`,
 *   cancellation), so it must be an error result (`error` set or `isError: true`). Results of
 *   proposed calls come in the order the model proposed the calls.
 * - Tool adjacency: while calls of the step's `assistant/message` wait for results, no `user/message`
 *   and no other `assistant/message` may stand.
 * - `assistant/message` (appended to the surface): equals what the `BlockAssembler` makes of the
 *   `assistant/chunk` events of its model call — its assembled prefix (`interruptedBlocks`) when
 *   `interrupted`. A call ends at its `finish` chunk, a `request/retry`, or a tool, step or turn event.
 * - `agent/inbox/spliced`: applies to the inbox folded so far (`applyInboxSplice`).
 * - `session/end-seed`: only as a fork's seed marker — once, between turns, at the seed length; the
 *   seed before it may hold the markers of the parent's own forks (a fork of a fork).
 * - `user/message` may stand anywhere; so may other event types, unless their definition
 *   (`defineSessionEvent`, when loaded in this process) places them in a turn or step.
 */
export class LogGrammar {
  private nextSeq = 0
  private lastTurn = 0
  private turn: TurnState | undefined
  private headerSeen = false
  private headerlessChunkReported = false
  private seedEndAt: number | undefined
  private inbox: InboxState = emptyInbox
  private splice: { event: SessionEvent; result: InboxState | Violation } | undefined
  /**
   * The chunk entry last checked through the online guard (`notePendingChunk`), until `catchUp`
   * passes it: its seq (-1 for none) and chunk, as two fields so that noting one allocates nothing.
   */
  private pendingSeq = -1
  private pendingChunk: StreamChunk | undefined
  private readonly parent: SessionParent | null | undefined
  /** How many events `apply` has consumed. */
  applied = 0

  constructor(origin: LogOrigin = {}) {
    this.parent = origin.parent
  }

  /** Applies every event of `events` past the ones already applied (a live log that grew). */
  catchUp(events: readonly SessionEvent[] | Pick<Session, 'eventAt' | 'seq'>): void {
    if (Array.isArray(events)) {
      for (let i = this.applied; i < events.length; i++) {
        const event = events[i]
        if (event !== undefined) this.apply(event)
      }
      return
    }
    const log = events as Pick<Session, 'eventAt' | 'seq'>
    for (let i = this.applied; i < log.seq; i++) {
      const pending = this.pendingChunk
      if (pending !== undefined && this.pendingSeq === i) {
        this.applyChunk(i, pending)
        continue
      }
      const event = log.eventAt(i)
      if (event !== undefined) this.apply(event)
    }
    this.pendingSeq = -1
    this.pendingChunk = undefined
  }

  /**
   * The first violation `checkChunk` would report, or `undefined` when the chunk entry fits: the
   * online guard's per-chunk question, answered without allocating when it fits.
   */
  chunkViolation(seq: number, turn: number, step: number): Violation | undefined {
    const open = this.turn
    const parent = this.parent
    if (
      seq === this.nextSeq &&
      (parent === undefined ||
        parent === null ||
        seq !== parent.seedLength ||
        this.seedEndAt !== undefined) &&
      open !== undefined &&
      turn === open.turn &&
      open.step !== undefined &&
      step === open.step.step &&
      (this.headerSeen || this.headerlessChunkReported)
    ) {
      return undefined
    }
    return this.checkChunk(seq, turn, step)[0]
  }

  /**
   * `check` of the chunk entry `chunk` at `seq` (of turn `turn`, step `step`), from its parts: the
   * same violations, without an event. Pure.
   */
  checkChunk(seq: number, turn: number, step: number): Violation[] {
    const out: Violation[] = []
    const report = (message: string) => {
      out.push({ check: 'log-grammar', seq, message: `assistant/chunk ${message}` })
    }
    if (seq !== this.nextSeq)
      report(`has seq ${seq}; expected ${this.nextSeq} (seqs run contiguously from 0)`)
    const parent = this.parent
    if (
      parent !== undefined &&
      parent !== null &&
      seq === parent.seedLength &&
      this.seedEndAt === undefined
    ) {
      report(`stands at seq ${seq}, where this fork's session/end-seed belongs (its seed length)`)
    }
    const open = this.turn
    if (open === undefined) {
      report('stands between turns; it belongs inside an open turn (turn/start first)')
      return out
    }
    if (turn !== open.turn) {
      report(`names turn ${turn}, but the open turn is ${open.turn}`)
      return out
    }
    if (open.step === undefined) report(`needs an open step, but turn ${open.turn} has none open`)
    else if (step !== open.step.step) report(`names step ${step}, but the open step is ${open.step.step}`)
    else if (!this.headerSeen && !this.headerlessChunkReported) {
      report(
        'is the first model output of the log, but no request/header precedes it; the request cannot be re-derived',
      )
    }
    return out
  }

  /**
   * Remembers the chunk entry just checked at `seq`, so that `catchUp` applies it from its parts
   * once it is committed instead of reading its event back from the log.
   */
  notePendingChunk(seq: number, chunk: StreamChunk): void {
    this.pendingSeq = seq
    this.pendingChunk = chunk
  }

  /** `apply` of the chunk entry `chunk` at `seq`. */
  applyChunk(seq: number, chunk: StreamChunk): void {
    this.applied++
    this.nextSeq = seq + 1
    if (!this.headerSeen) this.headerlessChunkReported = true
    this.turn?.step?.output.chunk(chunk, seq)
  }

  /** The violations `event` would commit here, in rule order; empty when it fits. Pure. */
  check(event: SessionEvent): Violation[] {
    const out: Violation[] = []
    const { seq, type } = event
    const report = (message: string) => {
      out.push({ check: 'log-grammar', seq, message: `${type} ${message}` })
    }
    if (seq !== this.nextSeq)
      report(`has seq ${seq}; expected ${this.nextSeq} (seqs run contiguously from 0)`)
    this.checkSeed(event, report)
    const turn = this.turn
    // Placement from the session event catalog: core `turn` and `step` types need an open turn here.
    const definition = sessionEventDefinition(type)
    if (definition?.core === true && definition.placement !== 'anywhere') {
      if (turn === undefined) {
        report('stands between turns; it belongs inside an open turn (turn/start first)')
        return out
      }
      const named = (event.data as { turn?: unknown }).turn
      if (type !== 'request/header' && named !== turn.turn) {
        report(`names turn ${String(named)}, but the open turn is ${turn.turn}`)
        return out
      }
    }
    switch (event.type) {
      case 'turn/start':
        if (turn !== undefined) {
          report(
            `opens turn ${event.data.turn} while turn ${turn.turn} is still open (opened at seq ${turn.openedAt})`,
          )
        } else if (event.data.turn !== this.lastTurn + 1) {
          report(`numbers turn ${event.data.turn}; expected ${this.lastTurn + 1}`)
        }
        break
      case 'turn/end':
        if (turn?.step !== undefined) {
          report(
            `closes turn ${turn.turn} while step ${turn.step.step} is still open (opened at seq ${turn.step.openedAt})`,
          )
        }
        break
      case 'step/start':
        if (turn?.step !== undefined) {
          report(
            `opens step ${event.data.step} while step ${turn.step.step} is still open (opened at seq ${turn.step.openedAt})`,
          )
        } else if (turn !== undefined && event.data.step !== turn.lastStep + 1) {
          report(`numbers step ${event.data.step} of turn ${turn.turn}; expected ${turn.lastStep + 1}`)
        }
        break
      case 'step/end':
      case 'assistant/chunk':
      case 'assistant/message':
      case 'tool/call':
      case 'tool/result':
      case 'request/retry': {
        const step = turn?.step
        if (turn === undefined || step === undefined) {
          report(`needs an open step, but turn ${turn?.turn} has none open`)
          break
        }
        if (event.data.step !== step.step) {
          report(`names step ${event.data.step}, but the open step is ${step.step}`)
          break
        }
        this.checkStepMember(event, step, report)
        break
      }
      case 'agent/inbox/spliced': {
        const result = this.spliced(event)
        if (!('nextTurn' in result)) out.push(result)
        break
      }
      case 'user/message': {
        const waiting = this.waitingCalls()
        if (waiting !== undefined) report(`carries message ${event.data.id}, which ${waiting}`)
        break
      }
      default:
        if (turn === undefined && definition !== undefined && definition.placement !== 'anywhere') {
          report('stands between turns, but its event definition says it belongs inside an open turn')
        }
        break
    }
    return out
  }

  /** A `session/end-seed` inside a known fork's seed: an ancestor's marker (the parent was a fork too). */
  private isAncestorMarker(seq: number): boolean {
    const parent = this.parent
    return parent !== undefined && parent !== null && seq < parent.seedLength
  }

  private checkSeed(event: SessionEvent, report: (message: string) => void): void {
    const parent = this.parent
    if (event.type !== 'session/end-seed') {
      if (
        parent !== undefined &&
        parent !== null &&
        event.seq === parent.seedLength &&
        this.seedEndAt === undefined
      ) {
        report(`stands at seq ${event.seq}, where this fork's session/end-seed belongs (its seed length)`)
      }
      return
    }
    if (parent === null) report('marks the end of a fork seed, but this session is not a fork')
    else if (this.isAncestorMarker(event.seq)) {
      // Inside the seed: the parent's own marker, copied with the prefix (a fork of a fork).
    } else if (parent !== undefined && this.seedEndAt !== undefined)
      report(`appears a second time; the seed already ended at seq ${this.seedEndAt}`)
    else if (parent !== undefined && event.seq !== parent.seedLength) {
      report(`stands at seq ${event.seq}; this fork's seed length is ${parent.seedLength}`)
    }
    if (this.turn !== undefined)
      report(`stands inside turn ${this.turn.turn}; a fork seed ends between turns`)
  }

  private checkStepMember(event: SessionEvent, step: StepState, report: (message: string) => void): void {
    switch (event.type) {
      case 'step/end': {
        const open = [...step.calls].filter(([, call]) => call.proposed && call.answeredAt === undefined)
        if (open.length > 0) {
          report(`closes step ${step.step} with unanswered tool call(s) ${open.map(([id]) => id).join(', ')}`)
        }
        return
      }
      case 'assistant/message': {
        const waiting = this.waitingCalls()
        if (waiting !== undefined) report(`carries message ${event.data.message.id}, which ${waiting}`)
        const surface = event.surface
        if (surface === undefined || surface.op === 'append') {
          const problem = step.output.check(event.data)
          if (problem !== undefined) report(problem)
        }
        return
      }
      case 'assistant/chunk':
        if (!this.headerSeen && !this.headerlessChunkReported) {
          report(
            'is the first model output of the log, but no request/header precedes it; the request cannot be re-derived',
          )
        }
        return
      case 'tool/call': {
        const { callId } = event.data
        const call = step.calls.get(callId)
        if (call === undefined || !call.proposed) {
          report(`announces call ${callId}, which no assistant/message of step ${step.step} proposed`)
        } else if (call.answeredAt !== undefined) {
          report(`announces call ${callId} after its tool/result (seq ${call.answeredAt})`)
        } else if (call.calledAt !== undefined) {
          report(`announces call ${callId} a second time (first at seq ${call.calledAt})`)
        }
        return
      }
      case 'tool/result': {
        const block: ToolResultBlock = event.data.message.content[0]
        const callId = block.toolCallId
        const call = step.calls.get(callId)
        if (event.data.message.source.callId !== callId) {
          report(
            `carries a result block for call ${callId} but names call ${event.data.message.source.callId} as its source`,
          )
        }
        if (call === undefined) {
          report(
            `answers call ${callId}, which is not a call of step ${step.step} (no assistant/message proposed it)`,
          )
        } else if (call.answeredAt !== undefined) {
          report(`answers call ${callId} a second time (first result at seq ${call.answeredAt})`)
        } else if (call.calledAt === undefined && event.data.error === undefined && block.isError !== true) {
          report(`answers call ${callId}, which never started (no tool/call), with a non-error result`)
        }
        if (call?.proposed === true && call.answeredAt === undefined) {
          const due = [...step.calls].find(([, other]) => other.proposed && other.answeredAt === undefined)
          if (due !== undefined && due[0] !== callId) {
            report(
              `answers call ${callId} while call ${due[0]}, proposed before it, has no result: results follow the order the model made the calls`,
            )
          }
        }
        return
      }
      default:
        return
    }
  }

  /** What a message standing now would break: the step's calls still waiting, or `undefined`. */
  private waitingCalls(): string | undefined {
    const step = this.turn?.step
    if (step === undefined) return undefined
    const waiting: string[] = []
    for (const [id, call] of step.calls) if (call.proposed && call.answeredAt === undefined) waiting.push(id)
    if (waiting.length === 0) return undefined
    return `stands between the tool calls of step ${step.step} and their results (unanswered: ${waiting.join(', ')}): results follow their calls directly`
  }

  private spliced(event: SessionEvent & { type: 'agent/inbox/spliced' }): InboxState | Violation {
    if (this.splice?.event === event) return this.splice.result
    let result: InboxState | Violation
    try {
      result = applyInboxSplice(this.inbox, event.data, event.seq)
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).replace(
        /^agent\/inbox\/spliced at seq \d+: /,
        '',
      )
      result = {
        check: 'log-grammar',
        seq: event.seq,
        message: `${event.type} is not a valid inbox splice: ${reason}`,
      }
    }
    this.splice = { event, result }
    return result
  }

  /**
   * Advances past `event` (committed, or reported and skipped), recovering as sensibly as it can: a
   * `turn/start` or `step/start` that would nest is skipped (as the online check would have refused
   * it); a misnumbered one is adopted, so the events after it that name its number fit.
   */
  apply(event: SessionEvent): void {
    this.applied++
    this.nextSeq = event.seq + 1
    const turn = this.turn
    switch (event.type) {
      case 'turn/start':
        // A turn/start inside an open turn is refused online; offline it is skipped the same way.
        if (turn !== undefined) return
        this.lastTurn = event.data.turn
        this.turn = { turn: event.data.turn, openedAt: event.seq, lastStep: 0, step: undefined }
        return
      case 'turn/end':
        if (turn !== undefined) this.turn = undefined
        return
      case 'step/start':
        if (turn === undefined || turn.step !== undefined) return
        turn.lastStep = event.data.step
        turn.step = {
          step: event.data.step,
          openedAt: event.seq,
          calls: new Map(),
          output: new CallAssembly(),
        }
        return
      case 'step/end':
        if (turn !== undefined) turn.step = undefined
        return
      case 'request/header':
        this.headerSeen = true
        return
      case 'assistant/chunk':
        if (!this.headerSeen) this.headerlessChunkReported = true
        turn?.step?.output.chunk(event.data.chunk, event.seq)
        return
      case 'assistant/message':
        turn?.step?.output.end()
        for (const block of event.data.message.content) {
          if (block.type === 'tool-call') this.call(block.id).proposed = true
        }
        return
      case 'tool/call':
        turn?.step?.output.end()
        this.call(event.data.callId).calledAt ??= event.seq
        return
      case 'tool/result': {
        turn?.step?.output.end()
        const block: ToolResultBlock = event.data.message.content[0]
        this.call(block.toolCallId).answeredAt ??= event.seq
        return
      }
      case 'agent/inbox/spliced': {
        const result = this.spliced(event)
        if ('nextTurn' in result) this.inbox = result
        this.splice = undefined
        return
      }
      case 'session/end-seed':
        if (!this.isAncestorMarker(event.seq)) this.seedEndAt ??= event.seq
        return
      case 'request/retry':
        // The loop gave up on the attempt: its chunks belong to no answer.
        turn?.step?.output.end()
        return
      default:
        return
    }
  }

  private call(id: string): CallState {
    const calls = this.turn?.step?.calls
    const fresh: CallState = { proposed: false, calledAt: undefined, answeredAt: undefined }
    if (calls === undefined) return fresh
    const known = calls.get(id)
    if (known !== undefined) return known
    calls.set(id, fresh)
    return fresh
  }
}
