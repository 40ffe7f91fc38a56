/**
 * The offline checks as one incremental pass: feed a recorded log event by event and collect what
 * breaks. It keeps only what the next events need — the grammar's open turn and step, the open model
 * call, the folded header and history — so its memory does not grow with the number of events or
 * requests, and a million-event file is checked as it is read.
 */
import { SessionError, type SessionEvent } from 'dsh-session'
import { RequestFold } from '../derive/request-fold.ts'
import { LogGrammar, type LogOrigin } from '../grammar/log-grammar.ts'
import { ModelCallSplitter } from '../grammar/model-calls.ts'
import { StreamGrammar } from '../grammar/stream-grammar.ts'
import { adjacencyViolation } from '../online/request-checker.ts'
import type { Violation } from '../types.ts'

/** How much a `SessionLogChecker` has checked. */
export interface LogCheckCounts {
  /** Events pushed. */
  readonly events: number
  /** Turns opened (`turn/start` events). */
  readonly turns: number
  /** Model calls whose request was re-derived from the log before them (a header was logged). */
  readonly requests: number
}

interface OpenCall {
  readonly grammar: StreamGrammar
  readonly seq: number
}

/**
 * Checks one log incrementally: `push(event)` returns the violations that event reveals (each with its
 * `seq` and its 0-based position as `index`), in the order `checkSessionLog` reports them. Runs the log
 * grammar (which includes message = chunks and tool adjacency), the stream grammar over each model
 * call's chunks, the surface fold, and re-derives the request of every model call from the fold so
 * far, checking its tool adjacency. Never throws for a bad log.
 */
export class SessionLogChecker {
  private readonly grammar: LogGrammar
  private readonly calls = new ModelCallSplitter()
  private readonly fold = new RequestFold()
  private call: OpenCall | undefined
  private index = 0
  private turns = 0
  private requests = 0

  constructor(origin: LogOrigin = {}) {
    this.grammar = new LogGrammar(origin)
  }

  /** A snapshot of what was checked so far. */
  get counts(): LogCheckCounts {
    return Object.freeze({ events: this.index, turns: this.turns, requests: this.requests })
  }

  /** Checks the next event of the log; returns what it breaks (empty when it fits). */
  push(event: SessionEvent): Violation[] {
    const index = this.index++
    const found: Violation[] = []
    for (const violation of this.grammar.check(event)) found.push({ ...violation, index })
    this.grammar.apply(event)
    if (event.type === 'turn/start') this.turns++
    this.checkCall(event, index, found)
    try {
      this.fold.push(event)
    } catch (error) {
      this.fold.skip(event)
      const message = error instanceof Error ? error.message : String(error)
      const seq = error instanceof SessionError ? error.where.seq : undefined
      found.push({ check: 'log-grammar', message, index, ...(typeof seq === 'number' ? { seq } : {}) })
    }
    return found
  }

  private checkCall(event: SessionEvent, index: number, found: Violation[]): void {
    const boundary = this.calls.push(event, index)
    if (boundary.ended !== undefined) {
      const call = this.call
      this.call = undefined
      if (
        call !== undefined &&
        !call.grammar.finished &&
        event.type === 'assistant/message' &&
        event.data.interrupted !== true
      ) {
        found.push({
          check: 'stream-grammar',
          seq: event.seq,
          index,
          message: `assistant/message completes the model call starting at seq ${call.seq}, but ${call.grammar.end() ?? 'the stream has no finish chunk'}`,
        })
      }
    }
    if (boundary.opened !== undefined) {
      this.call = { grammar: new StreamGrammar(), seq: event.seq }
      this.checkRequest(event, index, boundary.opened, found)
    }
    const call = this.call
    if (boundary.chunk === undefined || call === undefined || event.type !== 'assistant/chunk') return
    const problem = call.grammar.push(event.data.chunk)
    if (problem !== undefined) {
      const { turn, step } = event.data
      found.push({
        check: 'stream-grammar',
        seq: event.seq,
        index,
        message: `assistant/chunk of the model call starting at seq ${call.seq} (turn ${turn} step ${step}): ${problem}`,
      })
    }
    if (boundary.chunk.finished) this.call = undefined
  }

  /** The request of the call opening at `event` derives from the fold as it stands (events before it). */
  private checkRequest(
    event: SessionEvent,
    index: number,
    opened: { readonly turn: number; readonly step: number },
    found: Violation[],
  ): void {
    const header = this.fold.header
    if (header === undefined) return
    this.requests++
    const subject = () =>
      `the request of the model call starting at seq ${event.seq} (turn ${opened.turn} step ${opened.step})`
    const base = { check: 'request-reconstruction', seq: event.seq, index } as const
    const violation = adjacencyViolation(this.fold, header.header.messagePrefix?.length ?? 0, subject, base)
    if (violation !== undefined) found.push(violation)
  }
}
