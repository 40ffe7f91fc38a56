#!/usr/bin/env node
// Generates docs/reference/events.md from the event declarations in the packages' source: every
// member of cordis's `Events` interface declared inside `declare module 'cordis'` blocks, and every
// member of `SessionEventMap` with its placement and surface flag from the session event catalog
// (`coreEventCatalog` in dsh-session, `defineSessionEvent(type, {...})` calls in any package).
// With --check it exits 1 when the committed file is out of date.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

const root = new URL('..', import.meta.url).pathname
const out = join(root, 'docs/reference/events.md')

function sourceFiles(dir) {
  const files = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path)
  }
  return files
}

function jsDocText(node, source) {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  const text = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '').join(' ')
  const tags = docs.flatMap((doc) => doc.tags ?? [])
  return { text: text.replace(/\s+/g, ' ').trim(), tags: tags.map((tag) => tag.getText(source)) }
}

function compact(text) {
  return text
    .replace(/([^{;,(|&\s])[ \t]*\n\s*(?=[^}\s|&])/g, '$1; ')
    .replace(/\s+/g, ' ')
    .replace(/;\s*}/g, ' }')
    .trim()
}

function memberName(member, source) {
  const name = member.name
  if (!name) return '?'
  return ts.isStringLiteral(name) ? name.text : name.getText(source)
}

const cordisEvents = []
const sessionEvents = []
/** The catalog's traits by session event type: { placement, surface }. */
const catalog = new Map()

/** The `placement` (or older `enclosure`) and `surface` literals of a catalog declaration object. */
function declarationTraits(object) {
  const traits = { placement: 'anywhere', surface: false }
  for (const property of object.properties) {
    if (!ts.isPropertyAssignment(property) || !property.name) continue
    const key = property.name.getText()
    const value = property.initializer
    if ((key === 'placement' || key === 'enclosure') && ts.isStringLiteral(value)) {
      if (key === 'placement' || traits.placement === 'anywhere') traits.placement = value.text
    }
    if (key === 'surface') traits.surface = value.kind === ts.SyntaxKind.TrueKeyword
  }
  return traits
}

/** Reads catalog declarations: the core table's entries and `defineSessionEvent('type', {...})` calls. */
function visitCatalog(node) {
  if (ts.isVariableDeclaration(node) && node.name.getText() === 'coreEventCatalog') {
    let init = node.initializer
    while (init && (ts.isSatisfiesExpression(init) || ts.isAsExpression(init))) init = init.expression
    if (init && ts.isObjectLiteralExpression(init)) {
      for (const entry of init.properties) {
        if (!ts.isPropertyAssignment(entry) || !ts.isObjectLiteralExpression(entry.initializer)) continue
        const name = ts.isStringLiteral(entry.name) ? entry.name.text : entry.name.getText()
        catalog.set(name, declarationTraits(entry.initializer))
      }
    }
  }
  if (ts.isCallExpression(node) && node.expression.getText() === 'defineSessionEvent') {
    const [type, declaration] = node.arguments
    if (type && ts.isStringLiteral(type) && declaration && ts.isObjectLiteralExpression(declaration)) {
      catalog.set(type.text, declarationTraits(declaration))
    }
  }
  ts.forEachChild(node, visitCatalog)
}
const packagesDir = join(root, 'packages')
for (const pkg of readdirSync(packagesDir).sort()) {
  const srcDir = join(packagesDir, pkg, 'src')
  if (!existsSync(srcDir)) continue
  for (const file of sourceFiles(srcDir).sort()) {
    const text = readFileSync(file, 'utf8')
    if (text.includes('coreEventCatalog =') || text.includes('defineSessionEvent(')) {
      visitCatalog(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true))
    }
    if (!text.includes('interface Events') && !text.includes('interface SessionEventMap')) continue
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
    const visit = (node, inCordis) => {
      if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
        inCordis = node.name.text === 'cordis'
      }
      if (ts.isInterfaceDeclaration(node)) {
        const target =
          node.name.text === 'Events' && inCordis
            ? cordisEvents
            : node.name.text === 'SessionEventMap'
              ? sessionEvents
              : undefined
        if (target) {
          for (const member of node.members) {
            const name = memberName(member, source)
            const doc = jsDocText(member, source)
            let signature
            if (ts.isMethodSignature(member)) {
              const params = member.parameters.map((p) => compact(p.getText(source))).join(', ')
              signature = `(${params}) => ${member.type ? compact(member.type.getText(source)) : 'void'}`
            } else if (ts.isPropertySignature(member) && member.type) {
              signature = compact(member.type.getText(source))
            } else continue
            target.push({ name, signature, doc, pkg, file: relative(root, file) })
          }
        }
      }
      ts.forEachChild(node, (child) => visit(child, inCordis))
    }
    visit(source, false)
  }
}

// The dispatch mode follows from the signature: a `next` parameter makes a waterfall, an awaited
// result without one a serial hook, and a void result a contained notification.
function dispatchMode(entry) {
  if (/\bnext\s*:/.test(entry.signature)) return 'waterfall'
  if (/=> (Promise|Awaitable)</.test(entry.signature)) return 'serial'
  return 'emit'
}

const lines = [
  '# Event reference',
  '',
  "<!-- Generated by scripts/gen-event-reference.mjs from the packages' source. Do not edit by hand. -->",
  '',
  'Two kinds of events. **Cordis events** are dispatched on the plugin context (`ctx.on(name, listener)`);',
  'each says its dispatch mode: `waterfall` listeners receive `(payload..., next)` and return the result',
  '(first registered is outermost), `serial` listeners are awaited in order, `emit` notifications are',
  "contained (a throwing listener does not stop the others). **Session events** are the durable log's",
  'entries (`session.append(type, data)`); their payloads are listed here, with where each may stand',
  '(`anywhere`, only inside an open `turn`, or only inside the open `step` it names) and whether it adds',
  "a message to the model's surface, as the session event catalog declares them.",
  '',
  '## Cordis events',
  '',
  '| event | mode | signature | package | what it is |',
  '| --- | --- | --- | --- | --- |',
]
const cell = (s) => s.replace(/\|/g, '\\|')
for (const e of cordisEvents.sort((a, b) => a.name.localeCompare(b.name))) {
  lines.push(
    `| \`${e.name}\` | ${dispatchMode(e)} | \`${cell(e.signature)}\` | ${e.pkg} | ${cell(e.doc.text)} |`,
  )
}
lines.push(
  '',
  '## Session events',
  '',
  '| type | placement | surface | payload | package | what it is |',
  '| --- | --- | --- | --- | --- | --- |',
)
for (const e of sessionEvents.sort((a, b) => a.name.localeCompare(b.name))) {
  const traits = catalog.get(e.name)
  const placement = traits ? traits.placement : 'not in the catalog'
  const surface = traits?.surface ? 'yes' : 'no'
  lines.push(
    `| \`${e.name}\` | ${placement} | ${surface} | \`${cell(e.signature)}\` | ${e.pkg} | ${cell(e.doc.text)} |`,
  )
}
lines.push('')
const generated = lines.join('\n')

if (process.argv.includes('--check')) {
  const current = existsSync(out) ? readFileSync(out, 'utf8') : ''
  if (current !== generated) {
    console.error('docs/reference/events.md is out of date: run `pnpm docs:events`')
    process.exit(1)
  }
  console.log(
    `docs/reference/events.md is current (${cordisEvents.length} cordis events, ${sessionEvents.length} session events)`,
  )
} else {
  writeFileSync(out, generated)
  console.log(
    `wrote docs/reference/events.md (${cordisEvents.length} cordis events, ${sessionEvents.length} session events)`,
  )
}
