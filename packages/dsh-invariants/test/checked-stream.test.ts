/**
 * `checkedStream` as an iterator: what its consumer and its source see — when the source is opened,
 * advanced and closed, and what `next`/`return`/`throw` answer before, during and after the stream.
 */
import { checkedStream } from 'dsh-invariants'
import type { StreamChunk } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

const start: StreamChunk = { type: 'block-start', index: 0, blockType: 'text' }
const text = (value: string): StreamChunk => ({ type: 'text-delta', index: 0, text: value })
const end: StreamChunk = { type: 'block-end', index: 0, block: { type: 'text', text: 'ab' } }
const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }

/** A source over `chunks` that logs `open`, each `next` and `return` in `log`. */
function source(chunks: readonly StreamChunk[], log: string[]): AsyncIterable<StreamChunk> {
  return {
    [Symbol.asyncIterator]() {
      log.push('open')
      let i = 0
      return {
        next: async () => {
          log.push(`next ${i}`)
          const value = chunks[i++]
          return value === undefined ? { done: true, value: undefined } : { done: false, value }
        },
        return: async () => {
          log.push('return')
          return { done: true, value: undefined }
        },
      }
    },
  }
}

const fail = (message: string) => new Error(message)

describe('checkedStream as an iterator', () => {
  it('opens the source at the first next, holds finish until the source ended, then is done', async () => {
    const log: string[] = []
    const stream = checkedStream(source([start, text('a'), end, stop], log), fail)
    expect(log).toEqual([])
    const seen: unknown[] = []
    for (let i = 0; i < 6; i++) seen.push(await stream.next())
    expect(seen).toEqual([
      { done: false, value: start },
      { done: false, value: text('a') },
      { done: false, value: end },
      { done: false, value: stop },
      { done: true, value: undefined },
      { done: true, value: undefined },
    ])
    expect(log).toEqual(['open', 'next 0', 'next 1', 'next 2', 'next 3', 'next 4'])
  })

  it('closes the source when a chunk breaks the grammar, and is done after the throw', async () => {
    const log: string[] = []
    const stream = checkedStream(source([start, text('a'), stop, text('b')], log), fail)
    expect(await stream.next()).toEqual({ done: false, value: start })
    expect(await stream.next()).toEqual({ done: false, value: text('a') })
    await expect(stream.next()).rejects.toThrow(
      'chunk #3 (text-delta index 0) arrived after the finish chunk #2; a stream must end at its finish',
    )
    expect(await stream.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['open', 'next 0', 'next 1', 'next 2', 'next 3', 'return'])
  })

  it('throws at the end of a stream without finish; the ended source is not closed again', async () => {
    const log: string[] = []
    const stream = checkedStream(source([start], log), fail)
    expect(await stream.next()).toEqual({ done: false, value: start })
    await expect(stream.next()).rejects.toThrow('the stream ended after 1 chunk(s) without a finish chunk')
    expect(await stream.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['open', 'next 0', 'next 1'])
  })

  it('passes a source error through without closing the source', async () => {
    const log: string[] = []
    const broken: AsyncIterable<StreamChunk> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          log.push('next')
          throw new Error('socket closed')
        },
        return: async () => {
          log.push('return')
          return { done: true, value: undefined }
        },
      }),
    }
    const stream = checkedStream(broken, fail)
    await expect(stream.next()).rejects.toThrow('socket closed')
    expect(await stream.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['next'])
  })

  it('return() closes an open source once; before the first next it never opens it', async () => {
    const log: string[] = []
    const stream = checkedStream(source([start, text('a'), end, stop], log), fail)
    expect(await stream.next()).toEqual({ done: false, value: start })
    expect(await stream.return(undefined)).toEqual({ done: true, value: undefined })
    expect(await stream.next()).toEqual({ done: true, value: undefined })
    expect(await stream.return(undefined)).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['open', 'next 0', 'return'])

    const unopened: string[] = []
    const early = checkedStream(source([start], unopened), fail)
    expect(await early.return(undefined)).toEqual({ done: true, value: undefined })
    expect(await early.next()).toEqual({ done: true, value: undefined })
    expect(unopened).toEqual([])
  })

  it('throw() closes an open source and rejects with the error given', async () => {
    const log: string[] = []
    const stream = checkedStream(source([start, text('a'), end, stop], log), fail)
    expect(await stream.next()).toEqual({ done: false, value: start })
    await expect(stream.throw(new Error('consumer gave up'))).rejects.toThrow('consumer gave up')
    expect(await stream.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['open', 'next 0', 'return'])
  })

  it('answers next() calls made without waiting in order, one source step at a time', async () => {
    const log: string[] = []
    const stream = checkedStream(source([start, text('a'), end, stop], log), fail)
    const all = await Promise.all([stream.next(), stream.next(), stream.next(), stream.next(), stream.next()])
    expect(all.map((result) => (result.done === true ? 'done' : result.value.type))).toEqual([
      'block-start',
      'text-delta',
      'block-end',
      'finish',
      'done',
    ])
    expect(log).toEqual(['open', 'next 0', 'next 1', 'next 2', 'next 3', 'next 4'])
  })

  it('is its own async iterator', () => {
    const stream = checkedStream(source([], []), fail)
    expect(stream[Symbol.asyncIterator]()).toBe(stream)
  })
})
