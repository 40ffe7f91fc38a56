import { Context, Service } from 'cordis'
import { eventBus, untraced } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

declare module 'cordis' {
  interface Events {
    'test/wrap'(input: string, next: () => string): string
    'test/serial'(log: string[]): Promise<void>
  }
}

describe('eventBus', () => {
  it('calls the innermost step directly when nobody listens', () => {
    const app = new Context()
    const bus = eventBus(app)
    expect(bus.has('test/wrap')).toBe(false)
    expect(bus.waterfall('test/wrap', 'x', () => 'inner')).toBe('inner')
  })

  it('composes listeners exactly as ctx.waterfall does: first registered outermost, prepend outermost', () => {
    const app = new Context()
    app.on('test/wrap', (input, next) => `a(${input},${next()})`)
    app.on('test/wrap', (input, next) => `b(${input},${next()})`)
    app.on('test/wrap', (input, next) => `p(${input},${next()})`, { prepend: true })
    const bus = eventBus(app)
    expect(bus.has('test/wrap')).toBe(true)
    const viaBus = bus.waterfall('test/wrap', 'x', () => 'inner')
    expect(viaBus).toBe('p(x,a(x,b(x,inner)))')
    expect(app.waterfall('test/wrap', 'x', () => 'inner')).toBe(viaBus)
  })

  it('sees listeners registered after it was created and drops those of a disposed plugin', async () => {
    const app = new Context()
    const bus = eventBus(app)
    const fiber = app.plugin((ctx: Context) => {
      ctx.on('test/wrap', (input, next) => `late(${input},${next()})`)
    })
    await fiber
    expect(bus.waterfall('test/wrap', 'x', () => 'inner')).toBe('late(x,inner)')
    await fiber.dispose()
    expect(bus.waterfall('test/wrap', 'x', () => 'inner')).toBe('inner')
    expect(eventBus(app)).toBe(bus)
  })

  it('awaits serial listeners in order and resolves at once with none', async () => {
    const app = new Context()
    const bus = eventBus(app)
    const log: string[] = []
    await bus.serial('test/serial', log)
    expect(log).toEqual([])
    app.on('test/serial', async (entries) => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      entries.push('slow first')
    })
    app.on('test/serial', async (entries) => {
      entries.push('second')
    })
    await bus.serial('test/serial', log)
    expect(log).toEqual(['slow first', 'second'])
  })
})

describe('untraced', () => {
  class Counter extends Service {
    count = 0
    constructor(ctx: Context) {
      super(ctx, 'counter')
    }
    bump(): number {
      this.count += 1
      return this.count
    }
  }

  it('returns the service object behind the context proxy, sharing its state', async () => {
    const app = new Context()
    await app.plugin(Counter)
    const traced = (app as unknown as { counter: Counter }).counter
    const original = untraced(traced)
    expect(original).not.toBe(traced)
    expect(original).toBeInstanceOf(Counter)
    expect(original.bump()).toBe(1)
    expect(traced.bump()).toBe(2)
    expect(untraced(original)).toBe(original)
  })
})
