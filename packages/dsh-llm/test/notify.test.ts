import { Context } from 'cordis'
import { emitContained } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

declare module 'cordis' {
  interface Events {
    'test/ping'(value: number): void
  }
}

describe('emitContained', () => {
  it('reaches every listener in order even when one throws or rejects', async () => {
    const app = new Context()
    const log: string[] = []
    app.on('test/ping', (value) => {
      log.push(`first ${value}`)
      throw new Error('first failed')
    })
    app.on('test/ping', async (value) => {
      log.push(`second ${value}`)
      throw new Error('second rejected')
    })
    app.on('test/ping', (value) => {
      log.push(`third ${value}`)
    })
    const errors: string[] = []
    const called = emitContained(app, 'test/ping', [7], (error, event) => {
      errors.push(`${event}: ${error instanceof Error ? error.message : String(error)}`)
    })
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(called).toBe(3)
    expect(log).toEqual(['first 7', 'second 7', 'third 7'])
    expect(errors).toEqual(['test/ping: first failed', 'test/ping: second rejected'])
  })

  it('stops at the first throwing listener under cordis emit, which is why it exists', () => {
    const app = new Context()
    const log: string[] = []
    app.on('test/ping', () => {
      throw new Error('boom')
    })
    app.on('test/ping', () => {
      log.push('second')
    })
    expect(() => app.emit('test/ping', 1)).toThrow('boom')
    expect(log).toEqual([])
  })
})
