/**
 * Which peer releases a runtime measures, and how rows from a runtime beside the bench's own join
 * the table: tagged ids (no quick bound judges them), the runtime in the scenario, no targets.
 */
import { describe, expect, it } from 'vitest'
import { QUICK_BOUNDS, violations } from '../src/bounds.ts'
import { peersFor, runsCurrentPeers } from '../src/peers.ts'
import { row } from '../src/report.ts'
import { besideRows, type Runtime, withPeerVersions } from '../src/runtimes.ts'

describe('peer releases per runtime', () => {
  it('gives Node 22.19 and newer the current releases, older runtimes the pinned ones', () => {
    expect(
      ['20.20.2', '22.18.0', 'v22.19.0', '22.23.3', '24.21.0', '26.0.0'].map((v) => runsCurrentPeers(v)),
    ).toEqual([false, false, true, true, true, true])
  })

  it('reads the installed versions: pi-agent-core 1.x and ai 7 current, 0.73.1 and ai 6 pinned', () => {
    const current = peersFor('24.21.0')
    expect(current.current).toBe(true)
    expect(current.piAgentCore.name).toBe('@earendil-works/pi-agent-core')
    expect(current.piAgentCore.version).toMatch(/^1\.(6|[7-9]|\d{2,})\./)
    expect(current.ai.name).toBe('ai')
    expect(current.ai.version).toMatch(/^7\./)
    const pinned = peersFor('20.20.2')
    expect(pinned).toEqual({
      current: false,
      piAgentCore: { name: '@mariozechner/pi-agent-core', version: '0.73.1' },
      ai: { name: 'ai', version: expect.stringMatching(/^6\.0\./) },
    })
  })
})

const NODE20: Runtime = {
  node: '/usr/bin/node',
  version: '20.20.2',
  peers: {
    current: false,
    piAgentCore: { name: '@mariozechner/pi-agent-core', version: '0.73.1' },
    ai: { name: 'ai', version: '6.0.326' },
  },
}

describe('rows from a runtime beside the own one', () => {
  // A doubled step against pi-agent-core: it violates the step-cost bound on the own runtime.
  const slow = row({
    id: 'loop-wall-vs-pi',
    scenario: '1 tool loop',
    metric: 'in-memory, wall µs/step (median)',
    dsh: 400,
    baselineName: 'pi-agent-core',
    baseline: 100,
    target: '≤ 1.0×',
    check: (x) => x <= 1,
    runs: { dsh: [400, 400, 400], baseline: [100, 100, 100] },
    ratioTarget: true,
  })

  it('are tagged, named for the runtime and its peer release, and carry no target', () => {
    const [beside] = besideRows([slow], NODE20)
    expect(beside).toEqual({
      ...slow,
      id: 'loop-wall-vs-pi@node20',
      scenario: '1 tool loop, Node 20.20.2',
      baselineName: 'pi-agent-core 0.73.1',
      target: '',
      met: undefined,
      noisy: false,
    })
  })

  it('are not judged by the quick bounds, while the same row on the own runtime is', () => {
    const stepBound = QUICK_BOUNDS.filter((b) => b.id === 'loop-wall-vs-pi')
    expect(violations(besideRows([slow], NODE20), stepBound)).toEqual(['loop-wall-vs-pi: not measured'])
    expect(violations([slow], stepBound)).toHaveLength(1)
  })

  it('name the own runtime’s peers with their releases, leaving raw baselines alone', () => {
    const floor = { ...slow, id: 'loop-wall-vs-floor', baselineName: 'floor' }
    const ai = { ...slow, id: 'loop-wall-vs-ai', baselineName: 'ai-sdk' }
    const named = withPeerVersions([slow, floor, ai], NODE20).map((r) =>
      'error' in r ? r.error : r.baselineName,
    )
    expect(named).toEqual(['pi-agent-core 0.73.1', 'floor', 'ai 6.0.326'])
  })
})
