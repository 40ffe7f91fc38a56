/**
 * `node dist/top-frames.js <file.cpuprofile> [n]`: the top `n` frames of a V8 CPU profile by self
 * time, with their share of the samples — what the closing notes quote when a target is missed.
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
  }
  readonly children?: readonly number[]
}

interface Profile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

/** Self time per frame (function, file, line), largest first, as `[label, µs]`. */
export function topFrames(profile: Profile): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)
    if (node === undefined) return
    const { functionName, url, lineNumber } = node.callFrame
    const file = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(packages|bench)\//, '$1/')
    const label = `${functionName === '' ? '(anonymous)' : functionName} ${file}:${lineNumber + 1}`
    self.set(label, (self.get(label) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  return [...self.entries()].sort((a, b) => b[1] - a[1])
}

const [file, count] = process.argv.slice(2)
if (file !== undefined) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const frames = topFrames(profile)
  const total = frames.reduce((sum, [, us]) => sum + us, 0)
  for (const [label, us] of frames.slice(0, Number(count ?? 15))) {
    process.stdout.write(
      `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${label}\n`,
    )
  }
}
