/**
 * The array a session keeps its events in, as callers see it through `session.events`: reading is a
 * plain array's, but every in-place mutator throws, so a caller cannot reorder, drop or add events
 * behind the log's back. Arrays derived from it (`slice`, `map`, `filter`) are plain arrays.
 */
import { SessionError, SessionErrorCode } from './errors.ts'
import type { SessionEvent } from './types.ts'

const push = Array.prototype.push

function refuse(method: string): never {
  throw new SessionError(
    SessionErrorCode.READ_ONLY,
    `session events are read-only: ${method}() cannot change the log; copy it first (events.slice())`,
  )
}

/** A session's committed events. Only the owning session appends, through `add`. */
export class EventLog extends Array<SessionEvent> {
  static override get [Symbol.species](): ArrayConstructor {
    return Array
  }

  /** Appends a committed event (the owning session's path; callers cannot reach it through the type). */
  add(event: SessionEvent): void {
    push.call(this, event)
  }

  override push(): number {
    return refuse('push')
  }
  override pop(): SessionEvent | undefined {
    return refuse('pop')
  }
  override shift(): SessionEvent | undefined {
    return refuse('shift')
  }
  override unshift(): number {
    return refuse('unshift')
  }
  override splice(): SessionEvent[] {
    return refuse('splice')
  }
  override sort(): this {
    return refuse('sort')
  }
  override reverse(): SessionEvent[] {
    return refuse('reverse')
  }
  override fill(): this {
    return refuse('fill')
  }
  override copyWithin(): this {
    return refuse('copyWithin')
  }
}
