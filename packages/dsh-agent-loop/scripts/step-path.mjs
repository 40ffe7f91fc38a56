/**
 * Prints the path one loop step takes through dsh-agent-loop's source files and counts how often it
 * returns to a file it already left (issue 30, item 4). Every function of `src/` is instrumented to
 * report its file when it starts; a scripted model makes turn 1 run three steps (tool call, tool
 * call, text) and the path of each step is recorded from the previous `step/end` (step 1: from the
 * send) to its own `step/end`, leaving out what runs inside `session.append` (projections). Consecutive
 * entries in one file collapse into one.
 *
 * A streamed chunk repeats the same few files, so the count is given twice: every return, and the
 * distinct returns (each pair of file left → file returned to counted once), which is what a
 * reader following the path meets.
 *
 * Run from the repository root after building dsh-llm and dsh-session:
 * `node packages/dsh-agent-loop/scripts/step-path.mjs [--path] [--src=<another src/ to measure>]`
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..')
const srcArg = process.argv.find((arg) => arg.startsWith('--src='))?.slice('--src='.length)
const src = srcArg ?? join(pkg, 'src')
const out = join(pkg, 'node_modules', '.step-path')

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })
}

/** `text` with a `__stepPath(file)` call at the start of every function body. */
function instrument(text, file) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const mark = `__stepPath(${JSON.stringify(file)})`
  const inserts = []
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body !== undefined) {
      if (ts.isBlock(node.body)) inserts.push([node.body.getStart(source) + 1, `${mark};`])
      else {
        inserts.push([node.body.getStart(source), `(${mark}, `])
        inserts.push([node.body.end, ')'])
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  inserts.sort((a, b) => b[0] - a[0])
  let result = text
  for (const [at, piece] of inserts) result = result.slice(0, at) + piece + result.slice(at)
  return result
}

rmSync(out, { recursive: true, force: true })
for (const path of walk(src)) {
  const file = relative(src, path)
  const { outputText } = ts.transpileModule(instrument(readFileSync(path, 'utf8'), file), {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      rewriteRelativeImportExtensions: true,
      verbatimModuleSyntax: true,
    },
  })
  const target = join(out, file.replace(/\.ts$/, '.js'))
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, outputText)
}

let path
// Projections folding an event (the inbox's, say) run inside `session.append`: the session's work,
// not the step's path, so nothing is recorded while an append runs.
let appending = false
globalThis.__stepPath = (file) => {
  if (path !== undefined && !appending && path[path.length - 1] !== file) path.push(file)
}

const { Context } = await import('cordis')
const { LlmRuntime, userText } = await import('dsh-llm')
const { scriptedAdapter, textResponse, toolCallResponse } = await import('dsh-llm/testing')
const { Sessions } = await import('dsh-session')
const loop = await import(pathToFileURL(join(out, 'index.js')).href)

const app = new Context()
await app.plugin(LlmRuntime)
await app.plugin(Sessions)
await app.plugin(loop.ToolRegistry)
await app.plugin(loop.AgentLoop)
app.llm.registerAdapter(
  'test',
  scriptedAdapter([
    toolCallResponse('c1', 'echo', { text: 'a' }),
    toolCallResponse('c2', 'echo', { text: 'b' }),
    textResponse('done'),
  ]),
)
app.tools.register({
  name: 'echo',
  description: 'echoes',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args) => args.text,
})
const steps = []
app.on('session/event', (_session, event) => {
  if (event.type === 'step/end') {
    steps.push(path)
    path = []
  }
})
const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
const { session } = agent
const append = session.append.bind(session)
session.append = (...args) => {
  appending = true
  try {
    return append(...args)
  } finally {
    appending = false
  }
}
path = []
agent.send(userText('go'))
await agent.whenIdle()
path = undefined

/** Entries whose file the path had already left: all of them, and one per (previous file, file) pair. */
function returns(files) {
  const seen = new Set()
  const pairs = new Set()
  let all = 0
  for (const [index, file] of files.entries()) {
    if (seen.has(file)) {
      all++
      pairs.add(`${files[index - 1]} → ${file}`)
    }
    seen.add(file)
  }
  return { all, distinct: pairs.size }
}

/**
 * The path by concept folder, leaving out the helpers every concept calls down into (`timing/`,
 * `hooks.ts`, `errors.ts`), consecutive entries collapsed.
 */
function concepts(files) {
  const out = []
  for (const file of files) {
    if (file.startsWith('timing/') || file === 'hooks.ts' || file === 'errors.ts') continue
    const concept = file.includes('/') ? file.slice(0, file.indexOf('/')) : file
    if (out[out.length - 1] !== concept) out.push(concept)
  }
  return out
}

for (const [index, files] of steps.entries()) {
  const { all, distinct } = returns(files)
  const byConcept = concepts(files)
  console.log(
    `step ${index + 1}: ${files.length} files entered, ${all} returns to a file already left, ${distinct} distinct; ` +
      `by concept without timing/hooks/errors: ${returns(byConcept).all} returns (${byConcept.join(' → ')})`,
  )
  if (process.argv.includes('--path')) console.log(`  ${files.join(' → ')}`)
}
await app.dispose?.()
