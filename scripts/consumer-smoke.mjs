#!/usr/bin/env node
// The consumer smoke test: what a new user outside this repository gets. Packs every published
// package (after building it), checks each tarball (no sources, maps, `source` condition or
// workspace ranges; LICENSE and README present; packed size within its budget), installs the
// tarballs with plain npm into a fresh project, type-checks the README's quick start — extracted
// from the README's own code block — under NodeNext (as `tsc --init` sets it up) and under bundler,
// runs it on the scripted stand-in and without a key, and runs the invariants CLI with npx on the
// session file it wrote. Prints the packed and installed sizes. Exits non-zero on the first failure.
//
// Usage: node scripts/consumer-smoke.mjs [--no-build] [--keep]   (or `pnpm smoke`)
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = new Set(process.argv.slice(2))
const budgets = JSON.parse(readFileSync(join(root, 'scripts/package-budgets.json'), 'utf8'))
// `PNPM` may be a command line (`.ci/run` passes `npx --yes pnpm@12.4.2`).
const defaultPnpm = process.env.npm_execpath?.includes('pnpm')
  ? `${process.execPath} ${process.env.npm_execpath}`
  : 'pnpm'
const [pnpm, ...pnpmArgs] = (process.env.PNPM ?? defaultPnpm).split(' ')

function fail(message) {
  console.error(`consumer-smoke: ${message}`)
  process.exit(1)
}

/** Runs a command; on failure prints its output and stops. Returns stdout. */
function run(command, argv, options = {}) {
  const result = spawnSync(command, argv, { encoding: 'utf8', shell: false, ...options })
  if (result.status !== 0) {
    process.stderr.write(result.stdout ?? '')
    process.stderr.write(result.stderr ?? '')
    fail(`${command} ${argv.join(' ')} exited ${result.status ?? result.signal}`)
  }
  return result.stdout
}

/** The published packages: every `packages/*` whose package.json is not private. */
function publishedPackages() {
  return readdirSync(join(root, 'packages'))
    .map((dir) => ({
      dir: join(root, 'packages', dir),
      manifest: join(root, 'packages', dir, 'package.json'),
    }))
    .filter(({ manifest }) => {
      try {
        return JSON.parse(readFileSync(manifest, 'utf8')).private !== true
      } catch {
        return false
      }
    })
    .map(({ dir, manifest }) => ({ dir, name: JSON.parse(readFileSync(manifest, 'utf8')).name }))
}

/** Checks one tarball's file list and manifest; returns the problems found. */
function inspectTarball(name, tarball) {
  const problems = []
  const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n')
  for (const file of files) {
    if (file.endsWith('.map')) problems.push(`${name}: ships a source map ${file}`)
    if (/\.(ts|tsx|mts|cts)$/.test(file) && !/\.d\.(ts|mts|cts)$/.test(file)) {
      problems.push(`${name}: ships a TypeScript source ${file}`)
    }
  }
  for (const required of ['package/LICENSE', 'package/README.md', 'package/package.json']) {
    if (!files.includes(required)) problems.push(`${name}: ${required.slice(8)} is missing`)
  }
  const manifest = JSON.parse(
    execFileSync('tar', ['xzfO', tarball, 'package/package.json'], { encoding: 'utf8' }),
  )
  const text = JSON.stringify(manifest)
  if (text.includes('workspace:')) problems.push(`${name}: package.json still has a workspace: range`)
  if (text.includes('"source"')) problems.push(`${name}: package.json exports still have a source condition`)
  for (const field of ['license', 'repository', 'homepage', 'keywords', 'engines']) {
    if (manifest[field] === undefined) problems.push(`${name}: package.json has no ${field}`)
  }
  // Every package supports the Node versions the root states (the ones .ci/run tests).
  const nodeRange = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node
  if (manifest.engines !== undefined && manifest.engines.node !== nodeRange) {
    problems.push(
      `${name}: engines.node is ${JSON.stringify(manifest.engines.node)}, the root says ${nodeRange}`,
    )
  }
  return problems
}

/** The README's quick start: the ```ts block after `<!-- snippet: readme.ts -->`. */
function readmeQuickStart() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const match = readme.match(/<!-- snippet: readme\.ts -->\n```ts\n([\s\S]*?)```/)
  if (match === null) fail('README.md has no `<!-- snippet: readme.ts -->` ts block')
  return match[1]
}

/** Total size in bytes of the files under `dir`. */
function diskSize(dir) {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += diskSize(path)
    else if (entry.isFile()) total += statSync(path).size
  }
  return total
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} kB`
const npmFlags = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error']

const work = mkdtempSync(join(tmpdir(), 'dsh-consumer-'))
const tarballs = join(work, 'tarballs')
mkdirSync(tarballs)
const packages = publishedPackages()

// 1. Build and pack.
if (!args.has('--no-build')) {
  run(pnpm, [...pnpmArgs, '-r', ...packages.flatMap(({ name }) => ['--filter', name]), 'build'], {
    cwd: root,
  })
}
const packed = []
for (const { dir, name } of packages) {
  const before = new Set(readdirSync(tarballs))
  run(pnpm, [...pnpmArgs, 'pack', '--pack-destination', tarballs], { cwd: dir })
  const file = readdirSync(tarballs).find((entry) => !before.has(entry))
  if (file === undefined) fail(`pnpm pack wrote no tarball for ${name}`)
  packed.push({ name, tarball: join(tarballs, file), size: statSync(join(tarballs, file)).size })
}

// 2. Inspect each tarball and hold it to its budget.
const problems = packed.flatMap(({ name, tarball }) => inspectTarball(name, tarball))
let total = 0
for (const { name, size } of packed) {
  total += size
  const budget = budgets.packages[name]
  if (budget === undefined) problems.push(`${name}: no packed-size budget in scripts/package-budgets.json`)
  else if (size > budget) problems.push(`${name}: packed ${size} bytes, over its budget of ${budget}`)
}
if (total > budgets.total)
  problems.push(`all packages: packed ${total} bytes, over the budget of ${budgets.total}`)
if (problems.length > 0) fail(`tarball problems:\n  ${problems.join('\n  ')}`)

// 3. The install size of the core (the quick start's packages) with the cordis peer, no dev dependencies.
const core = packed.filter(({ name }) => budgets.core.includes(name))
const runtime = join(work, 'runtime')
mkdirSync(runtime)
writeFileSync(
  join(runtime, 'package.json'),
  JSON.stringify({ name: 'runtime', private: true, type: 'module' }),
)
run('npm', ['install', ...npmFlags, '--omit=dev', ...core.map((p) => p.tarball), 'cordis@4.0.0-rc.10'], {
  cwd: runtime,
})
const installed = diskSize(join(runtime, 'node_modules'))
const installedOwn = core.reduce((sum, { name }) => sum + diskSize(join(runtime, 'node_modules', name)), 0)
const installedBy = Object.fromEntries(
  readdirSync(join(runtime, 'node_modules'))
    .filter((entry) => !entry.startsWith('.') && !entry.startsWith('dsh-'))
    .map((entry) => [entry, diskSize(join(runtime, 'node_modules', entry))]),
)

// 4. A user's project: the README's install line, with every tarball in place of the registry.
const app = join(work, 'app')
mkdirSync(app)
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
run('npm', ['install', ...npmFlags, ...packed.map((p) => p.tarball), 'cordis@4.0.0-rc.10', 'zod@^4'], {
  cwd: app,
})
run('npm', ['install', ...npmFlags, '-D', 'typescript@~5.9.3', '@types/node@^20'], { cwd: app })
writeFileSync(join(app, 'agent.ts'), readmeQuickStart())
// dsh-mcp: its plugin, service and naming rule type-check and load beside the quick start.
writeFileSync(
  join(app, 'mcp.ts'),
  [
    "import { Context } from 'cordis'",
    "import { ToolRegistry } from 'dsh-agent-loop'",
    "import McpTools, { toolName } from 'dsh-mcp'",
    'const app = new Context()',
    'await app.plugin(ToolRegistry)',
    'await app.plugin(McpTools, { servers: {} })',
    "console.log(toolName('fs', 'files.read'), app.mcp.servers().length)",
    '',
  ].join('\n'),
)
// dsh-compaction's public types, as an app showing "context N% full" uses them.
writeFileSync(
  join(app, 'compaction.ts'),
  [
    "import { Context } from 'cordis'",
    "import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'",
    "import { Compaction } from 'dsh-compaction'",
    "import { LlmRuntime } from 'dsh-llm'",
    "import { Sessions } from 'dsh-session'",
    'export async function contextFull(): Promise<number> {',
    '  const app = new Context()',
    '  await app.plugin(LlmRuntime)',
    '  await app.plugin(Sessions)',
    '  await app.plugin(ToolRegistry)',
    '  await app.plugin(AgentLoop)',
    "  await app.plugin(Compaction, { threshold: 0.8, contextWindows: { 'my-model': 32_000 } })",
    '  const session = await app.sessions.create()',
    '  return Math.round(app.compaction.pressure(session).ratio * 100)',
    '}',
    '',
  ].join('\n'),
)
// dsh-fleet's public types over dsh-session-postgres, as a host starts one (not called: no database
// here), and the package loads with its dependencies.
writeFileSync(
  join(app, 'fleet.ts'),
  [
    "import type { Context } from 'cordis'",
    "import type {} from 'dsh-agent-loop'",
    "import { DRAIN_CAUSE, FleetHost, type FleetHostEvent, interruptedNote, wasDrainedMidTurn } from 'dsh-fleet'",
    "import { SessionId } from 'dsh-llm'",
    "import type { PostgresStorage } from 'dsh-session-postgres'",
    'export function startHost(ctx: Context, storage: PostgresStorage): Promise<FleetHost> {',
    '  const onEvent = (event: FleetHostEvent): void => {',
    "    if (event.type === 'claimed') console.log('claimed', event.sessionId, event.repairedEvents)",
    '  }',
    "  return FleetHost.start({ ctx, storage, agent: { provider: 'local', model: 'qwen3' }, onEvent })",
    '}',
    "const note = interruptedNote(SessionId('s-1'))",
    'console.log(DRAIN_CAUSE, wasDrainedMidTurn([]), note.source.kind, typeof startHost)',
    '',
  ].join('\n'),
)
const tsc = join(app, 'node_modules/.bin/tsc')

// 5. Type-check under NodeNext (tsc --init, as the README says) and under bundler; then build.
run(tsc, ['--init', '--rootDir', '.', '--outDir', 'dist', '--types', 'node'], { cwd: app })
run(tsc, ['--noEmit'], { cwd: app })
run(tsc, ['--noEmit', '--module', 'esnext', '--moduleResolution', 'bundler'], { cwd: app })
run(tsc, [], { cwd: app })

// 5b. The published types stay precise: a wrong tool argument type and a wrong event name do not compile.
writeFileSync(
  join(app, 'wrong.ts'),
  [
    "import { Context } from 'cordis'",
    "import { ToolRegistry } from 'dsh-agent-loop'",
    "import { z } from 'zod'",
    'const app = new Context()',
    'await app.plugin(ToolRegistry)',
    'app.tools.register({',
    "  name: 'add', description: 'Add', parameters: z.object({ a: z.number() }),",
    '  execute: ({ a }) => a.toUpperCase(),',
    '})',
    "app.on('agent/no-such-event', () => {})",
    '',
  ].join('\n'),
)
const wrong = spawnSync(
  tsc,
  [
    '--noEmit',
    '--module',
    'nodenext',
    '--target',
    'esnext',
    '--strict',
    '--skipLibCheck',
    '--types',
    'node',
    'wrong.ts',
  ],
  { cwd: app, encoding: 'utf8' },
)
const reported = wrong.stdout.split('\n').filter((line) => line.startsWith('wrong.ts'))
if (
  reported.length !== 2 ||
  !reported[0]?.includes("Property 'toUpperCase' does not exist on type 'number'") ||
  !reported[1]?.includes(`'"agent/no-such-event"' is not assignable`)
) {
  fail(`wrong.ts should fail with exactly the two type errors, got:\n${wrong.stdout}`)
}
rmSync(join(app, 'wrong.ts'))

const mcp = run(process.execPath, ['dist/mcp.js'], { cwd: app })
if (!/^fs__files_read_[0-9a-f]{8} 0\n$/.test(mcp)) fail(`dist/mcp.js printed:\n${mcp}`)
const fleet = run(process.execPath, ['dist/fleet.js'], { cwd: app })
if (fleet !== 'host draining false plugin function\n') fail(`dist/fleet.js printed:\n${fleet}`)

// 6. Run it: on the scripted stand-in it prints the transcript and exits 0 ...
const env = { ...process.env, DEEPSEEK_API_KEY: '', DSH_SCRIPTED: '' }
const scripted = run(process.execPath, ['dist/agent.js'], { cwd: app, env: { ...env, DSH_SCRIPTED: '1' } })
if (!/^\[add \{"a":2,"b":40\}\]\n2 \+ 40 = 42\.\n\[completed in 2 steps; session \S+\]\n$/.test(scripted)) {
  fail(`the quick start on the scripted model printed:\n${scripted}`)
}
// ... and without a key it exits non-zero with one clear line.
const keyless = spawnSync(process.execPath, ['dist/agent.js'], { cwd: app, env, encoding: 'utf8' })
const expected =
  'error: deepseek: apiKey is empty; set DEEPSEEK_API_KEY (https://platform.deepseek.com/api_keys)\n'
if (keyless.status === 0 || keyless.stderr !== expected || keyless.stdout !== '') {
  fail(
    `without a key the quick start exited ${keyless.status} with stdout ${JSON.stringify(keyless.stdout)} and stderr ${JSON.stringify(keyless.stderr)}`,
  )
}

// 7. The invariants CLI, as CI would run it, over the session the scripted run wrote.
const sessions = readdirSync(join(app, 'sessions')).filter((file) => file.endsWith('.jsonl'))
if (sessions.length !== 1) fail(`expected one session file, found ${sessions.length}`)
run('npx', ['--no-install', 'dsh-invariants', 'check', join('sessions', sessions[0])], { cwd: app })

// 8. dsh-llm-ai-sdk from its tarball: an AI SDK V3 model (a stand-in, no network) as a dsh adapter.
writeFileSync(
  join(app, 'ai-sdk.mjs'),
  [
    "import { fromAiSdk } from 'dsh-llm-ai-sdk'",
    'const parts = [',
    "  { type: 'text-start', id: '0' },",
    "  { type: 'text-delta', id: '0', delta: 'hi' },",
    "  { type: 'text-end', id: '0', providerMetadata: { anthropic: { signature: 's' } } },",
    "  { type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } },",
    ']',
    'const model = {',
    "  specificationVersion: 'v3', provider: 'stand-in.chat', modelId: 'm', supportedUrls: {},",
    "  doGenerate: async () => { throw new Error('unused') },",
    '  doStream: async () => ({ stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close() } }) }),',
    '}',
    'const chunks = []',
    "for await (const chunk of fromAiSdk(model).stream({ provider: 'p', model: 'm', messages: [] })) chunks.push(chunk.type === 'block-end' ? chunk.block : chunk.type)",
    'console.log(JSON.stringify(chunks))',
    '',
  ].join('\n'),
)
const aiSdk = run(process.execPath, ['ai-sdk.mjs'], { cwd: app })
const aiSdkExpected =
  '["block-start","text-delta",{"type":"text","text":"hi","providerData":{"anthropic":{"signature":"s"}}},"usage","finish"]\n'
if (aiSdk !== aiSdkExpected) fail(`dsh-llm-ai-sdk with a stand-in model printed:\n${aiSdk}`)

console.log('consumer-smoke: ok')
for (const { name, size } of packed) console.log(`  ${name.padEnd(20)} ${kb(size).padStart(9)} packed`)
console.log(`  ${'all packages'.padEnd(20)} ${kb(total).padStart(9)} packed (budget ${kb(budgets.total)})`)
const coreSize = core.reduce((sum, { size }) => sum + size, 0)
console.log(
  `  ${'core'.padEnd(20)} ${kb(coreSize).padStart(9)} packed: ${core.map(({ name }) => name).join(', ')}`,
)
console.log(
  `  ${'core installed'.padEnd(20)} ${kb(installed).padStart(9)} with dependencies and the cordis peer, no dev dependencies`,
)
console.log(`  ${'  of which dsh'.padEnd(20)} ${kb(installedOwn).padStart(9)}`)
const largest = Object.entries(installedBy)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 4)
console.log(
  `  ${'  largest deps'.padEnd(20)} ${largest.map(([name, size]) => `${name} ${kb(size)}`).join(', ')}`,
)
if (args.has('--keep')) console.log(`  kept ${work}`)
else rmSync(work, { recursive: true, force: true })
