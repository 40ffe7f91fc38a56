// Runs the MCP conformance suite's client scenarios against dsh-mcp: `pnpm -F dsh-mcp conformance`
// (after `pnpm build`). The suite itself needs Node 22 or later (it uses fs.globSync); with an older
// node, run `npx -y node@22 conformance/run.mjs`. Exits non-zero if a scenario fails.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// The client scenarios that apply: dsh-mcp offers no elicitation, sampling or OAuth.
const SCENARIOS = ['initialize', 'tools_call', 'sse-retry']

const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  console.error(
    `conformance: the suite needs Node 22 or later (this is ${process.version}); run: npx -y node@22 ${fileURLToPath(import.meta.url)}`,
  )
  process.exit(1)
}
const require = createRequire(import.meta.url)
const suite = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
)
const client = fileURLToPath(new URL('./client.mjs', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'dsh-mcp-conformance-'))
let failed = 0
for (const scenario of SCENARIOS) {
  const result = spawnSync(
    process.execPath,
    [suite, 'client', '--command', `node ${client}`, '--scenario', scenario],
    {
      cwd: work,
      encoding: 'utf8',
    },
  )
  const passed = result.status === 0
  if (!passed) failed++
  console.log(`${passed ? 'passed' : 'FAILED'}  ${scenario}`)
  if (!passed) process.stdout.write(result.stdout + result.stderr)
}
rmSync(work, { recursive: true, force: true })
process.exit(failed === 0 ? 0 : 1)
