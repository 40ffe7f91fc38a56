/**
 * The results chart, drawn as plain SVG: µs per step against step number for each harness of the
 * long loop (log scale, so the floor and `ai` fit on one axis), and heap per idle agent of the scale
 * scenario as bars with the 50 KB target.
 */

/** One line of the step chart. */
export interface Series {
  readonly name: string
  readonly points: readonly (readonly [number, number])[]
}

/** One bar of the memory chart. */
export interface Bar {
  readonly name: string
  readonly value: number
}

const COLORS: Readonly<Record<string, string>> = {
  'dsh-memory': '#d62728',
  'pi-agent-core': '#1f77b4',
  'ai-sdk': '#2ca02c',
  floor: '#7f7f7f',
  dsh: '#d62728',
}

const W = 960
const H = 400
const LEFT = { x: 70, y: 40, w: 560, h: 300 }
const RIGHT = { x: 720, y: 40, w: 200, h: 300 }

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

function color(name: string, i: number): string {
  return COLORS[name] ?? ['#9467bd', '#8c564b', '#e377c2', '#17becf'][i % 4] ?? '#000'
}

/** Powers of ten (and 2×, 5×) within `[lo, hi]`, for log-axis ticks. */
function logTicks(lo: number, hi: number): number[] {
  const out: number[] = []
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e
      if (v >= lo && v <= hi) out.push(v)
    }
  }
  return out
}

function stepChart(series: readonly Series[], steps: number): string[] {
  const values = series.flatMap((s) => s.points.map(([, v]) => v)).filter((v) => v > 0 && Number.isFinite(v))
  if (values.length === 0) return []
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)))
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)))
  const x = (step: number) => LEFT.x + (step / steps) * LEFT.w
  const y = (v: number) => LEFT.y + LEFT.h - ((Math.log10(v) - Math.log10(lo)) / Math.log10(hi / lo)) * LEFT.h
  const out = [
    `<text x="${LEFT.x}" y="24" font-size="14" font-weight="bold">µs per step against step number (${steps.toLocaleString('en-US')}-step turn, mean of each 1% of the steps, log scale)</text>`,
    `<rect x="${LEFT.x}" y="${LEFT.y}" width="${LEFT.w}" height="${LEFT.h}" fill="none" stroke="#444"/>`,
  ]
  for (const t of logTicks(lo, hi)) {
    out.push(
      `<line x1="${LEFT.x}" x2="${LEFT.x + LEFT.w}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${LEFT.x - 6}" y="${(y(t) + 4).toFixed(1)}" font-size="11" text-anchor="end">${t}</text>`,
    )
  }
  for (let i = 0; i <= 4; i++) {
    const step = Math.round((steps * i) / 4)
    out.push(
      `<text x="${x(step).toFixed(1)}" y="${LEFT.y + LEFT.h + 16}" font-size="11" text-anchor="middle">${step.toLocaleString('en-US')}</text>`,
    )
  }
  out.push(
    `<text x="${LEFT.x + LEFT.w / 2}" y="${LEFT.y + LEFT.h + 34}" font-size="12" text-anchor="middle">step</text>`,
  )
  series.forEach((s, i) => {
    const pts = s.points
      .filter(([, v]) => v > 0 && Number.isFinite(v))
      .map(([step, v]) => `${x(step).toFixed(1)},${y(v).toFixed(1)}`)
      .join(' ')
    out.push(`<polyline fill="none" stroke="${color(s.name, i)}" stroke-width="1.5" points="${pts}"/>`)
    out.push(
      `<rect x="${LEFT.x + 10}" y="${LEFT.y + 10 + i * 16}" width="10" height="10" fill="${color(s.name, i)}"/>`,
      `<text x="${LEFT.x + 26}" y="${LEFT.y + 19 + i * 16}" font-size="11">${esc(s.name)}</text>`,
    )
  })
  return out
}

function memoryChart(bars: readonly Bar[], targetKb: number): string[] {
  if (bars.length === 0) return []
  const top = Math.max(targetKb, ...bars.map((b) => b.value)) * 1.15
  const y = (v: number) => RIGHT.y + RIGHT.h - (v / top) * RIGHT.h
  const width = RIGHT.w / (bars.length * 1.5)
  const out = [
    `<text x="${RIGHT.x}" y="24" font-size="14" font-weight="bold">heap per idle agent, KB</text>`,
    `<line x1="${RIGHT.x}" x2="${RIGHT.x}" y1="${RIGHT.y}" y2="${RIGHT.y + RIGHT.h}" stroke="#444"/>`,
    `<line x1="${RIGHT.x}" x2="${RIGHT.x + RIGHT.w}" y1="${RIGHT.y + RIGHT.h}" y2="${RIGHT.y + RIGHT.h}" stroke="#444"/>`,
    `<line x1="${RIGHT.x}" x2="${RIGHT.x + RIGHT.w}" y1="${y(targetKb).toFixed(1)}" y2="${y(targetKb).toFixed(1)}" stroke="#d62728" stroke-dasharray="4 3"/>`,
    `<text x="${RIGHT.x + RIGHT.w}" y="${(y(targetKb) - 4).toFixed(1)}" font-size="11" text-anchor="end">target ${targetKb} KB</text>`,
  ]
  bars.forEach((b, i) => {
    const bx = RIGHT.x + width * 0.5 + i * width * 1.5
    out.push(
      `<rect x="${bx.toFixed(1)}" y="${y(b.value).toFixed(1)}" width="${width.toFixed(1)}" height="${(RIGHT.y + RIGHT.h - y(b.value)).toFixed(1)}" fill="${color(b.name, i)}"/>`,
      `<text x="${(bx + width / 2).toFixed(1)}" y="${(y(b.value) - 4).toFixed(1)}" font-size="11" text-anchor="middle">${b.value.toFixed(1)}</text>`,
      `<text x="${(bx + width / 2).toFixed(1)}" y="${RIGHT.y + RIGHT.h + 16}" font-size="11" text-anchor="middle">${esc(b.name)}</text>`,
    )
  })
  return out
}

/** The SVG document: the step curves of `series` over `steps` steps, and `bars` against `targetKb`. */
export function chartSvg(
  series: readonly Series[],
  steps: number,
  bars: readonly Bar[],
  targetKb: number,
): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    ...stepChart(series, steps),
    ...memoryChart(bars, targetKb),
    '</svg>',
  ].join('\n')
}
