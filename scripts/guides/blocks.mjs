// The code blocks of a markdown guide, with the marker comment that may precede each: which are
// complete programs to type-check and run, which are fragments (and what they leave out), and which
// show a region of a snippet file. Pure functions; `scripts/guides-check.mjs` runs what they find.

/** Fence languages that are code to check. Other fences (sh, json, text, ...) are not run. */
export const CODE_LANGUAGES = new Set(['ts', 'typescript', 'js', 'mjs', 'javascript'])

/**
 * Options of `<!-- run: ... -->`: `deterministic` (two runs write byte-identical files), `vitest` (a
 * test file, run by vitest), `record-then-replay` (runs once with `DSH_REPLAY=record` against the
 * model stub, then again with no key and no reachable model).
 */
export const RUN_OPTIONS = new Set(['deterministic', 'vitest', 'record-then-replay'])

/**
 * Every fenced block of `markdown`: `{ lang, code, line, marker }`, where `line` is the 1-based line
 * of the opening fence and `marker` the `<!-- kind: text -->` comment right above it (blank lines
 * between are allowed), parsed as `{ kind, text }`, or undefined.
 */
export function fencedBlocks(markdown) {
  const lines = markdown.split('\n')
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i] ?? '')
    if (open === null) continue
    const fence = open[2] ?? '```'
    const indent = open[1] ?? ''
    const body = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j] ?? ''
      if (line.trimStart().startsWith(fence) && line.trim() === line.trim().replace(/[^`~]/g, '')) break
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line)
    }
    let k = i - 1
    while (k >= 0 && (lines[k] ?? '').trim() === '') k--
    const comment = /^\s*<!--\s*([\w-]+)\s*:\s*([\s\S]*?)\s*-->\s*$/.exec(lines[k] ?? '')
    blocks.push({
      lang: (open[3] ?? '').toLowerCase(),
      code: `${body.join('\n')}\n`,
      line: i + 1,
      marker: comment === null ? undefined : { kind: comment[1] ?? '', text: comment[2] ?? '' },
    })
    i = j
  }
  return blocks
}

/**
 * What to do with each code block of a guide: `{ action: 'run' | 'fragment' | 'snippet', ... }`.
 * A block marked `<!-- fragment: what it leaves out -->` is skipped, and must say what it leaves out;
 * `<!-- snippet: file.ts#region -->` shows part of a snippet file, which is checked whole; any other
 * code block is a complete program. `<!-- run: deterministic -->` is a program whose files must come
 * out byte-identical on two runs; `<!-- run: vitest -->` is a vitest test file (options combine). Returns `{ units, problems }`.
 */
export function classify(document, markdown) {
  const units = []
  const problems = []
  for (const block of fencedBlocks(markdown)) {
    if (!CODE_LANGUAGES.has(block.lang)) continue
    const where = `${document}:${block.line}`
    const marker = block.marker
    if (marker?.kind === 'fragment') {
      if (marker.text.length < 8)
        problems.push(`${where}: a fragment marker must say what the block leaves out`)
      units.push({ action: 'fragment', where, reason: marker.text })
      continue
    }
    if (marker?.kind === 'snippet') {
      units.push({ action: 'snippet', where, file: marker.text.split('#')[0] ?? '' })
      continue
    }
    const options = marker?.kind === 'run' ? marker.text.split(/[\s,]+/).filter(Boolean) : []
    for (const option of options) {
      if (!RUN_OPTIONS.has(option)) problems.push(`${where}: unknown run option ${JSON.stringify(option)}`)
    }
    units.push({
      action: 'run',
      where,
      lang: block.lang,
      code: block.code,
      deterministic: options.includes('deterministic'),
      vitest: options.includes('vitest'),
      recordThenReplay: options.includes('record-then-replay'),
    })
  }
  return { units, problems }
}
