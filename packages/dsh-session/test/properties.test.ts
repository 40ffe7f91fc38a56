import { CallId, type ContentBlock } from 'dsh-llm'
import {
  foldMessages,
  interruptedTurnClosers,
  JsonlStorage,
  type Session,
  type SurfaceMeta,
} from 'dsh-session'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { tempDir } from './fixtures/events.ts'
import { assistant, mountSessions, toolResult, types, user } from './support.ts'

type Action =
  | { readonly kind: 'user'; readonly replace: readonly [number, number] | undefined }
  | { readonly kind: 'inbox' }
  | { readonly kind: 'advance' }
  | { readonly kind: 'assistant'; readonly text: boolean; readonly calls: number }
  | { readonly kind: 'chunk' }
  | { readonly kind: 'call' }
  | { readonly kind: 'result' }
  | { readonly kind: 'header' }

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('user' as const),
    replace: fc.option(fc.tuple(fc.nat(6), fc.nat(6)), { nil: undefined }),
  }),
  fc.constant({ kind: 'inbox' as const }),
  fc.constant({ kind: 'advance' as const }),
  fc.constant({ kind: 'advance' as const }),
  fc.record({ kind: fc.constant('assistant' as const), text: fc.boolean(), calls: fc.nat(3) }),
  fc.constant({ kind: 'chunk' as const }),
  fc.constant({ kind: 'call' as const }),
  fc.constant({ kind: 'result' as const }),
  fc.constant({ kind: 'header' as const }),
)

/** A small model of the loop: it only ever appends events that are valid at that point. */
class Driver {
  private turn = 0
  private open = false
  private step = 0
  private stepOpen = false
  private unlogged: string[] = []
  private unanswered: string[] = []
  private next = 0
  /** The model's own surface: ids and producing seqs (an oracle independent of the fold). */
  readonly surface: Array<{ id: string; seq: number }> = []

  constructor(private readonly session: Session) {}

  run(act: Action): void {
    const s = this.session
    const id = () => `m${this.next++}`
    switch (act.kind) {
      case 'user': {
        const message = user(id())
        const meta = this.replaceMeta(act.replace)
        s.append('user/message', message, meta)
        this.record(message.id, s.seq - 1, meta)
        return
      }
      case 'inbox':
        s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [user(id())] })
        return
      case 'advance':
        if (!this.open) {
          this.turn++
          this.open = true
          this.step = 0
          s.append('turn/start', { turn: this.turn, trigger: { kind: 'queued' } })
        } else if (this.stepOpen && this.unanswered.length === 0) {
          this.stepOpen = false
          s.append('step/end', { turn: this.turn, step: this.step })
        } else if (!this.stepOpen && this.step < 3) {
          this.step++
          this.stepOpen = true
          s.append('step/start', { turn: this.turn, step: this.step })
        } else if (!this.stepOpen) {
          this.open = false
          s.append('turn/end', { turn: this.turn, reason: { kind: 'completed' } })
        }
        return
      case 'assistant': {
        if (!this.stepOpen || this.unanswered.length > 0) return
        const content: ContentBlock[] = act.text ? [{ type: 'text', text: 'hi' }] : []
        for (let i = 0; i < act.calls; i++) {
          const callId = `c${this.next++}`
          content.push({ type: 'tool-call', id: CallId(callId), name: 'tool', arguments: '{}' })
          this.unlogged.push(callId)
          this.unanswered.push(callId)
        }
        const message = assistant(id(), content)
        s.append('assistant/message', { turn: this.turn, step: this.step, message })
        if (content.length > 0) this.record(message.id, s.seq - 1, undefined)
        return
      }
      case 'chunk':
        if (this.stepOpen) {
          s.append('assistant/chunk', {
            turn: this.turn,
            step: this.step,
            chunk: { type: 'text-delta', index: 0, text: 'x' },
          })
        }
        return
      case 'call': {
        const callId = this.unlogged.shift()
        if (callId !== undefined) {
          s.append('tool/call', {
            turn: this.turn,
            step: this.step,
            callId: CallId(callId),
            name: 'tool',
            arguments: '{}',
          })
        }
        return
      }
      case 'result': {
        const callId = this.unanswered[0]
        if (callId === undefined || this.unlogged.includes(callId)) return
        this.unanswered.shift()
        const message = toolResult(id(), callId)
        s.append('tool/result', { turn: this.turn, step: this.step, message })
        this.record(message.id, s.seq - 1, undefined)
        return
      }
      case 'header':
        if (this.open) {
          s.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'change' })
        }
        return
    }
  }

  private replaceMeta(range: readonly [number, number] | undefined): SurfaceMeta | undefined {
    if (range === undefined || this.surface.length === 0) return undefined
    const start = Math.min(range[0], this.surface.length - 1)
    const end = Math.min(this.surface.length, start + range[1])
    const sourceEventSeqs = this.surface.slice(start, end).map((node) => node.seq)
    return { op: 'replace', start, end, sourceEventSeqs }
  }

  private record(id: string, seq: number, meta: SurfaceMeta | undefined): void {
    if (meta?.op === 'replace') this.surface.splice(meta.start, meta.end - meta.start, { id, seq })
    else this.surface.push({ id, seq })
  }
}

describe('log and projection properties', () => {
  test('incremental deriveMessages equals a fold from scratch at every prefix; seqs stay contiguous', async () => {
    const app = await mountSessions()
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(action, fc.boolean()), { maxLength: 80 }), async (script) => {
        const session = await app.sessions.create()
        const driver = new Driver(session)
        const derivedAt: Array<[number, readonly unknown[]]> = []
        for (const [act, look] of script) {
          driver.run(act)
          if (!look) continue
          const derived = session.deriveMessages()
          derivedAt.push([session.seq, derived])
          expect(derived.map((message) => message.id)).toEqual(driver.surface.map((node) => node.id))
        }
        for (const [length, derived] of derivedAt) {
          expect(derived).toEqual(foldMessages(session.events.slice(0, length)))
        }
        expect(session.deriveMessages()).toEqual(foldMessages(session.events))
        expect(session.events.map((event) => event.seq)).toEqual(session.events.map((_event, i) => i))
        for (const closer of interruptedTurnClosers(session.events)) {
          session.append(closer.type as never, closer.data as never)
        }
        expect(session.openTurn()).toBeUndefined()
        expect(session.deriveMessages()).toEqual(foldMessages(session.events))
        await app.sessions.close(session)
      }),
      { numRuns: 150 },
    )
  })
})

describe('JSONL round trip', () => {
  test('a session written through JsonlStorage in random batches loads back identical, and reopens', async () => {
    const { dir, dispose } = tempDir()
    const storage = new JsonlStorage({ dir })
    const app = await mountSessions({ storage })
    const text = fc.string({ unit: 'binary', maxLength: 12 })
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(action, fc.boolean()), { maxLength: 60 }),
          fc.array(text, { maxLength: 4 }),
          async (script, texts) => {
            const session = await app.sessions.create()
            const driver = new Driver(session)
            for (const [act, flushHere] of script) {
              driver.run(act)
              if (flushHere) await session.flush()
            }
            for (const [i, value] of texts.entries()) session.append('user/message', user(`t${i}`, value))
            const written = session.events
            await app.sessions.close(session)
            const loaded = await new JsonlStorage({ dir }).load(session.id)
            expect(loaded.events).toEqual(written)
            expect(loaded.report).toEqual({ repairedEvents: 0 })
            const reopened = await app.sessions.open(session.id)
            const closers = interruptedTurnClosers(written)
            expect(reopened.events.slice(0, written.length)).toEqual(written)
            expect(types(reopened.events.slice(written.length))).toEqual(closers.map((closer) => closer.type))
            await app.sessions.close(reopened)
          },
        ),
        { numRuns: 40 },
      )
    } finally {
      dispose()
    }
  }, 30_000)
})
