#!/usr/bin/env node
// Executable guides: every TypeScript/JavaScript block of docs/*.md and the package READMEs, in a
// consumer project installed from the packed tarballs (the consumer smoke test's project, reused
// with --keep). Each block that is not marked `<!-- fragment: what it leaves out -->` is a complete
// program: all are type-checked together under NodeNext (strict), then each runs with node in a
// fresh folder — or, marked `<!-- run: vitest -->`, as a vitest test file; `<!-- run: deterministic -->`
// runs twice and every file it wrote must be byte-identical. A `<!-- snippet: file.ts#region -->`
// block is checked through its whole snippet file (examples/coding-agent/snippets/). Every run gets
// a PostgreSQL (embedded, `DATABASE_URL`) and a local OpenAI-compatible model stub (`OPENAI_BASE_URL`).
// Then a deliberately broken program (a type error) and a failing one (a throw) must each fail, so
// the check is known to bite. Exits non-zero on the first failure.
//
// Usage: node scripts/guides-check.mjs [--no-build] [--keep] [--only <substring>] [--reuse <kept dir>]
import { spawn, spawnSync } from 'node:child_process'
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join, relative } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { classify } from './guides/blocks.mjs'
import { startModelStub } from './guides/model-stub.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const argv = process.argv.slice(2)
const args = new Set(argv)
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined
const RUN_TIMEOUT_MS = 90_000

function fail(message) {
  console.error(`guides-check: ${message}`)
  process.exit(1)
}

/** Runs a command; returns `{status, stdout, stderr}`. */
function exec(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', timeout: RUN_TIMEOUT_MS, ...options })
  return {
    status: result.status ?? result.signal ?? result.error?.message,
    stdout: result.stdout ?? '',
    stderr: result.stderr ?? '',
  }
}

/**
 * Runs a command without blocking this process (the model stub answers from this process's event
 * loop); resolves to `{status, stdout, stderr}`, killing it after `RUN_TIMEOUT_MS`.
 */
function run(command, commandArgs, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ status: code ?? signal, stdout, stderr })
    })
  })
}

/** The guides: docs/*.md and every package README. */
function guides() {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
  const readmes = readdirSync(join(root, 'packages'))
    .map((dir) => `packages/${dir}/README.md`)
    .filter((path) => {
      try {
        readFileSync(join(root, path))
        return true
      } catch {
        return false
      }
    })
  return [...docs, ...readmes]
}

// 1. What to check.
const units = []
const problems = []
for (const document of guides()) {
  const found = classify(document, readFileSync(join(root, document), 'utf8'))
  units.push(...found.units)
  problems.push(...found.problems)
}
if (problems.length > 0) fail(`marker problems:\n  ${problems.join('\n  ')}`)
const slug = (where) =>
  where
    .replace(/^(docs|packages)\//, '')
    .replace(/[^\w]+/g, '-')
    .replace(/-+$/, '')
const programs = units
  .filter((unit) => unit.action === 'run')
  .filter((unit) => only === undefined || unit.where.includes(only))
const snippetFiles = [...new Set(units.filter((unit) => unit.action === 'snippet').map((unit) => unit.file))]
const fragments = units.filter((unit) => unit.action === 'fragment')

// 2. The consumer project: the smoke test's, kept (or, with --reuse <dir>, one a previous run kept).
const reuse = argv.includes('--reuse') ? argv[argv.indexOf('--reuse') + 1] : undefined
const smokeArgs = ['scripts/consumer-smoke.mjs', '--keep', ...(args.has('--no-build') ? ['--no-build'] : [])]
const smoke =
  reuse === undefined
    ? exec(process.execPath, smokeArgs, { cwd: root, timeout: 900_000, env: process.env })
    : { status: 0, stdout: `kept ${reuse}`, stderr: '' }
if (smoke.status !== 0) fail(`the consumer smoke test failed:\n${smoke.stdout}${smoke.stderr}`)
const work = /kept (\S+)/.exec(smoke.stdout)?.[1]
if (work === undefined) fail(`the consumer smoke test did not keep its project:\n${smoke.stdout}`)
const app = join(work, 'app')
const cleanup = () => {
  if (!args.has('--keep')) rmSync(work, { recursive: true, force: true })
}

// The guides' own install lines add these (docs say which); versions follow the repository's.
const extras = [
  'vitest@~4.1.12',
  'pg@^8.23.1',
  '@types/pg@^8.23.1',
  'valibot@^1.5.0',
  '@opentelemetry/api@~1.10',
  '@opentelemetry/sdk-trace@^3.1',
  '@opentelemetry/context-async-hooks@^3.1',
  '@opentelemetry/exporter-trace-otlp-http@^0.301',
  '@opentelemetry/resources@^3.1',
  '@opentelemetry/semantic-conventions@^1.45.0',
]
const npmFlags = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error']
const installed = exec('npm', ['install', ...npmFlags, ...extras], { cwd: app, timeout: 600_000 })
if (installed.status !== 0) fail(`npm install of the guides' packages failed:\n${installed.stderr}`)

// 3. Write every program and snippet file, type-check them all, compile them to JavaScript.
const guidesDir = join(app, 'guides')
rmSync(guidesDir, { recursive: true, force: true })
rmSync(join(app, 'guides-dist'), { recursive: true, force: true })
rmSync(join(app, 'guides-broken'), { recursive: true, force: true })
mkdirSync(guidesDir)
for (const unit of programs) {
  const ext = unit.lang === 'js' || unit.lang === 'javascript' || unit.lang === 'mjs' ? 'mjs' : 'ts'
  unit.file = `${slug(unit.where)}${unit.vitest ? '.test' : ''}.${ext}`
  // `export {}` keeps a block without imports a module (no clashes between blocks' top-level names).
  writeFileSync(join(guidesDir, unit.file), `${unit.code}\nexport {}\n`)
}
for (const file of snippetFiles) {
  copyFileSync(join(root, 'examples/coding-agent/snippets', file), join(guidesDir, `snippet-${file}`))
}
// Every Cordis event a package declares (docs/reference/events.md is generated from the sources)
// must reach a consumer through the built .d.ts: `ctx.on('<name>', ...)` type-checks for each.
const eventRows = readFileSync(join(root, 'docs/reference/events.md'), 'utf8').matchAll(
  /^\| `([\w/-]+)` \| (?:emit|waterfall|serial) \| .* \| (dsh-[\w-]+) \|/gm,
)
const declared = [...eventRows].map((match) => ({ name: match[1], pkg: match[2] }))
if (declared.length === 0) fail('docs/reference/events.md lists no Cordis events')
writeFileSync(
  join(guidesDir, 'events-shipped.ts'),
  [
    "import { Context } from 'cordis'",
    ...[...new Set(declared.map((event) => event.pkg))].map((pkg) => `import '${pkg}'`),
    'const app = new Context()',
    // Only the name is under test: `as never` fits any listener signature.
    ...declared.map((event) => `app.on('${event.name}', (() => undefined) as never) // ${event.pkg}`),
    'export {}',
    '',
  ].join('\n'),
)

const tsconfig = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'esnext',
    strict: true,
    types: ['node'],
    allowJs: true,
    checkJs: true,
    outDir: 'guides-dist',
    rootDir: 'guides',
    skipLibCheck: true,
  },
  include: ['guides'],
}
writeFileSync(join(app, 'tsconfig.guides.json'), JSON.stringify(tsconfig, null, 2))
const tsc = join(app, 'node_modules/.bin/tsc')
const typed = exec(tsc, ['-p', 'tsconfig.guides.json'], { cwd: app })
if (typed.status !== 0) {
  // Point each error at the guide line it comes from.
  const text = typed.stdout.replace(/guides\/([\w.-]+)\((\d+),(\d+)\)/g, (match, file, line) => {
    const unit = programs.find((candidate) => candidate.file === file)
    if (unit === undefined) return match
    const [document, start] = unit.where.split(':')
    return `${document}:${Number(start) + Number(line)} (${match})`
  })
  cleanup()
  fail(`the guides' code does not type-check under NodeNext:\n${text}`)
}

// 4. Run each program with a database and a model stub.
const pg = await startPostgres()
const stub = await startModelStub()
const env = {
  ...process.env,
  DATABASE_URL: pg.url,
  OPENAI_BASE_URL: stub.url,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${stub.url}/traces`,
  OPENAI_API_KEY: '',
  DEEPSEEK_API_KEY: '',
  DSH_REPLAY: 'replay',
  NODE_OPTIONS: '',
}
const failures = []
try {
  for (const unit of programs) {
    const outcome = await runUnit(unit)
    if (outcome !== undefined) failures.push(outcome)
    else {
      const how = unit.deterministic
        ? ' (byte-identical on two runs)'
        : unit.recordThenReplay
          ? ' (recorded, then replayed without a key or a model)'
          : ''
      console.log(`  ok ${unit.where}${how}`)
    }
  }
  console.log(`  ok ${declared.length} Cordis events type-check in ctx.on() from the built declarations`)
  for (const file of snippetFiles) {
    const ran = await run(
      process.execPath,
      [join(app, 'guides-dist', `snippet-${file.replace(/\.ts$/, '.js')}`)],
      {
        cwd: mkdtempSync(join(work, 'run-')),
        env,
      },
    )
    if (ran.status !== 0) failures.push(`snippet ${file} failed to load (${ran.status}):\n${ran.stderr}`)
    else console.log(`  ok snippets/${file} (type-checked and loaded; its tests run it)`)
  }
  // 5. The check bites: a broken block and a failing block each fail it.
  if (only === undefined) failures.push(...(await selfTest()))
} finally {
  await stub.close()
  pg.stop()
}
if (failures.length > 0) {
  cleanup()
  fail(`${failures.length} guide program(s) failed:\n\n${failures.join('\n\n')}`)
}
console.log(
  `guides-check: ok: ${programs.length} programs and ${snippetFiles.length} snippet files type-checked and run; ${fragments.length} fragments marked`,
)
cleanup()

/** Runs one program (twice when deterministic); returns a failure message or undefined. */
async function runUnit(unit) {
  const runOnce = async (runEnv = env) => {
    const dir = mkdtempSync(join(work, 'run-'))
    const result = unit.vitest
      ? await run(join(app, 'node_modules/.bin/vitest'), ['run', '--root', app, join('guides', unit.file)], {
          cwd: app,
          env: runEnv,
        })
      : await run(process.execPath, [join(app, 'guides-dist', unit.file.replace(/\.ts$/, '.js'))], {
          cwd: dir,
          env: runEnv,
        })
    return { dir, result }
  }
  const first = await runOnce(unit.recordThenReplay ? { ...env, DSH_REPLAY: 'record' } : env)
  if (first.result.status !== 0) {
    return `${unit.where} exited ${first.result.status}:\n${first.result.stdout}${first.result.stderr}`
  }
  if (unit.recordThenReplay) {
    // Replay: no key, and no model to reach (port 9, discard, has no listener on loopback).
    const offline = await runOnce({ ...env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: '' })
    if (offline.result.status !== 0) {
      return `${unit.where} failed to replay without a key or a model (${offline.result.status}):\n${offline.result.stdout}${offline.result.stderr}`
    }
  }
  if (!unit.deterministic) return undefined
  const second = await runOnce()
  if (second.result.status !== 0) {
    return `${unit.where} exited ${second.result.status} on its second run:\n${second.result.stderr}`
  }
  const a = filesUnder(first.dir)
  const b = filesUnder(second.dir)
  if (a.size === 0) return `${unit.where} is marked deterministic but wrote no file`
  for (const [path, bytes] of a) {
    if (!b.has(path)) return `${unit.where}: ${path} was written on the first run only`
    if (!bytes.equals(b.get(path))) return `${unit.where}: ${path} differs between two runs`
  }
  if (b.size !== a.size) return `${unit.where}: the second run wrote other files`
  return undefined
}

function filesUnder(dir, base = dir, out = new Map()) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) filesUnder(path, base, out)
    else if (entry.isFile()) out.set(relative(base, path), readFileSync(path))
  }
  return out
}

/** A program with a type error and one that throws must each fail the check. */
async function selfTest() {
  const out = []
  const dir = join(app, 'guides-broken')
  mkdirSync(dir)
  writeFileSync(
    join(dir, 'broken.ts'),
    "import { userText } from 'dsh-llm'\nconst n: number = userText('hi')\nexport { n }\n",
  )
  writeFileSync(
    join(dir, 'throws.mjs'),
    "import { userText } from 'dsh-llm'\nif (userText('hi').role === 'user') throw new Error('deliberately broken')\n",
  )
  const brokenTyped = exec(
    tsc,
    [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--target',
      'esnext',
      '--types',
      'node',
      join(dir, 'broken.ts'),
    ],
    { cwd: app },
  )
  if (brokenTyped.status === 0 || !brokenTyped.stdout.includes("is not assignable to type 'number'")) {
    out.push(`self-test: a block with a type error was not caught:\n${brokenTyped.stdout}`)
  }
  const thrown = await run(process.execPath, [join(dir, 'throws.mjs')], { cwd: dir, env })
  if (thrown.status === 0) out.push('self-test: a block that throws exited 0')
  if (out.length === 0)
    console.log('  ok self-test: a block with a type error and a block that throws both fail')
  return out
}

/** The repository's embedded PostgreSQL test server (one for every program). */
async function startPostgres() {
  const child = spawn(
    process.execPath,
    [join(root, 'packages/dsh-session-postgres/test/fixtures/pg-server.mjs')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`the PostgreSQL server exited ${code}`)))
  })
  const parsed = JSON.parse(line)
  if (parsed.url === undefined) throw new Error(`embedded PostgreSQL: ${parsed.error}`)
  return { url: parsed.url, stop: () => child.stdin.end() }
}
