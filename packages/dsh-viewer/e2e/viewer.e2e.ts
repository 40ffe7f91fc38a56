import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bigSession, sessionFile } from '../test/big-session.ts'
import { ARTIFACTS, CLI, demoSession, launchChromium, REBOUND_HOST, writePage } from './setup.ts'

let browser: Browser
let demo: string
const outside: string[] = []

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
  demo = await demoSession()
})
afterAll(async () => {
  await browser?.close()
})

/** A page that records (and refuses) any request that is not the page itself: the viewer must work offline. */
async function offlinePage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } })
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith('file:') || url.startsWith('http://127.0.0.1:')) return route.continue()
    outside.push(url)
    return route.abort()
  })
  page.on('pageerror', (error) => outside.push(`page error: ${error.message}`))
  return page
}

async function serve(file: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, file, '--no-open'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (part: Buffer) => {
      out += part.toString()
      const match = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    child.on('exit', (code) => reject(new Error(`dsh-viewer exited with ${code} before serving: ${out}`)))
  })
  return { url, child }
}

it('opens a request of the demo session and follows a message to the event it came from', async () => {
  const { url, child } = await serve(demo)
  try {
    const page = await offlinePage()
    await page.goto(url)
    await page.getByTestId('request-1').click()
    const panel = page.getByTestId('request-panel')
    await expect.poll(() => panel.locator('h2').textContent()).toContain('Request #1 · turn 1 step 2')
    // The model's first answer is in request #1 (after the prefix, the prompt and the workspace context).
    const link = page.locator('[data-testid^="message-link-"]', { hasText: 'assistant/message' }).first()
    const position = Number((await link.getAttribute('data-testid'))?.replace('message-link-', ''))
    const label = (await link.textContent()) ?? ''
    const seq = Number(/seq (\d+) assistant\/message/.exec(label)?.[1])
    expect(Number.isInteger(seq)).toBe(true)
    await link.click()
    await expect
      .poll(() => page.getByTestId('event-detail').locator('h3').textContent())
      .toBe(`seq ${seq} · assistant/message`)
    const row = page.getByTestId(`event-${seq}`)
    await expect.poll(() => row.getAttribute('class')).toContain('selected')
    expect(await row.isVisible()).toBe(true)
    const detail = JSON.parse((await page.getByTestId('event-detail').locator('pre').textContent()) ?? '{}')
    const sent = JSON.parse(
      (await page.getByTestId(`message-${position}`).locator('pre').textContent()) ?? '[]',
    )
    expect(detail.data.message.content).toEqual(sent)
    expect(page.url()).toContain(`request=1`)
    await page.getByTestId('filter-inbox').click()
    // Inbox activity: sends and claims, and the user messages that came in around the inbox (injected).
    const rows = await page.locator('[data-testid="event-list"] .event').allTextContents()
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) expect(row).toMatch(/agent\/inbox\/spliced|user\/message\[injected\]/)
    expect(rows.some((row) => row.includes('agent/inbox/spliced'))).toBe(true)
    await page.getByTestId('filter-all').click()
    await page.getByTestId('previous-request').click()
    await expect.poll(() => panel.locator('h2').textContent()).toContain('Request #0 · turn 1 step 1')
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-demo.png') })
    await page.close()
  } finally {
    child.kill()
  }
  expect(outside).toEqual([])
})

it('renders under its Content-Security-Policy with no violation, and refuses a DNS-rebinding request', async () => {
  const { url, child } = await serve(demo)
  try {
    const page = await offlinePage()
    const console: string[] = []
    page.on('console', (message) => void console.push(message.text()))
    // Init scripts run outside the page's policy: this listener sees every violation the page causes.
    await page.addInitScript(
      'window.__violations = []; document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI))',
    )
    const response = await page.goto(url)
    expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'none'; script-src 'sha256-/)
    expect(response?.headers()['x-content-type-options']).toBe('nosniff')
    expect(response?.headers()['referrer-policy']).toBe('no-referrer')
    await page.getByTestId('request-1').click()
    await expect
      .poll(() => page.getByTestId('request-panel').locator('h2').textContent())
      .toContain('Request #1 · turn 1 step 2')
    // The virtual lists position rows with inline styles (set through the DOM): they must apply.
    const top = await page
      .getByTestId('event-list')
      .locator('.vrow')
      .nth(1)
      .evaluate((row) => row.style.top)
    expect(top).toMatch(/^\d+px$/)
    expect(await page.evaluate('window.__violations')).toEqual([])
    expect(console.filter((text) => /Content.Security.Policy/i.test(text))).toEqual([])
    await page.close()

    // A page of another site whose name now resolves to 127.0.0.1 reaches the port: refused.
    const rebound = await browser.newPage()
    const answer = await rebound.goto(`http://${REBOUND_HOST}:${new URL(url).port}/`)
    expect(answer?.status()).toBe(403)
    expect(await answer?.text()).toBe('forbidden: unknown host\n')
    await rebound.close()
  } finally {
    child.kill()
  }
  expect(outside).toEqual([])
})

it('highlights an invariant violation at its event in a deliberately broken session file', async () => {
  const lines = readFileSync(demo, 'utf8').split('\n')
  const cut = lines.findIndex((line) => line.includes('"type":"step/end"'))
  const removedSeq = JSON.parse(lines[cut] ?? '{}').seq as number
  const broken = join(ARTIFACTS, 'broken-session.jsonl')
  // A dropped step/end in the middle, and a final line cut short (which is skipped, and named).
  const kept = lines.filter((_, i) => i !== cut)
  writeFileSync(broken, `${kept.join('\n')}{"type":"user/mess`)
  const html = join(ARTIFACTS, 'viewer-broken.html')
  await writePage(broken, html)
  const page = await offlinePage()
  await page.goto(pathToFileURL(html).href)
  await page.getByTestId('violations').click()
  const row = page.getByTestId(`event-${removedSeq + 1}`)
  await expect.poll(() => row.getAttribute('class')).toContain('violation')
  expect(await row.getAttribute('class')).toContain('selected')
  const note = page.getByTestId('violation-note').first()
  expect(await note.textContent()).toMatch(/^log-grammar: .*seq/)
  expect(await page.getByTestId('torn-line').textContent()).toBe(
    ` · line ${kept.length} is torn (cut short) and was skipped`,
  )
  await page.screenshot({ path: join(ARTIFACTS, 'viewer-violation.png') })
  await page.close()
  expect(outside).toEqual([])
})

it('keeps a 100k-event session responsive: few rows in the DOM, the last event reachable', async () => {
  const events = bigSession(400, 240)
  const file = join(ARTIFACTS, 'big-session.jsonl')
  writeFileSync(file, sessionFile(events, 'big'))
  const html = join(ARTIFACTS, 'viewer-big.html')
  await writePage(file, html)
  const page = await offlinePage()
  const started = Date.now()
  await page.goto(pathToFileURL(html).href)
  await page
    .getByTestId('request-399')
    .waitFor({ state: 'attached', timeout: 5_000 })
    .catch(() => undefined)
  await page.getByTestId('event-0').waitFor()
  const loadMs = Date.now() - started
  expect(await page.locator('.event').count()).toBeLessThan(200)
  await page.getByTestId('event-list').evaluate((list) => {
    list.scrollTop = list.scrollHeight
  })
  await page.getByTestId(`event-${events.length - 1}`).waitFor({ timeout: 5_000 })
  await page.getByTestId('timeline').evaluate((list) => {
    list.scrollTop = list.scrollHeight
  })
  await page.getByTestId('request-399').click({ timeout: 5_000 })
  await expect
    .poll(() => page.getByTestId('request-panel').locator('h2').textContent())
    .toContain('Request #399')
  expect(loadMs).toBeLessThan(30_000)
  await page.close()
  expect(outside).toEqual([])
})
