import { buildViewData, renderPage, serveViewer } from 'dsh-viewer'
import { expect, it } from 'vitest'
import { bigSession } from './big-session.ts'

const data = () => {
  const events = bigSession(1, 2)
  const first = events[2]
  if (first === undefined) throw new Error('no user message')
  const hostile = {
    ...first,
    data: {
      ...(first.data as object),
      content: [{ type: 'text', text: '</script><script>alert(1)</script>' }],
    },
  }
  return buildViewData({
    file: 'x.jsonl',
    sessionId: 's<1>',
    events: [events[0], events[1], hostile, ...events.slice(3)] as typeof events,
  })
}

it('inlines the data and the bundle so nothing is loaded from elsewhere, and no event text can close the script', () => {
  const page = renderPage(data(), 'window.__app = 1')
  expect(page).toContain('<title>dsh session s&lt;1&gt;</title>')
  expect(page).toContain('<script>window.__app = 1</script>')
  expect(page).not.toMatch(/<script[^>]*\bsrc=|<link\b/)
  expect(page.match(/<\/script>/g)).toHaveLength(2)
  const json = page.slice(page.indexOf('application/json">') + 18, page.indexOf('</script>'))
  expect(JSON.parse(json).events[2].data.content[0].text).toBe('</script><script>alert(1)</script>')
})

it('serves the page on 127.0.0.1 at / and nothing else', async () => {
  const server = await serveViewer('<p>page</p>')
  try {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    const page = await fetch(server.url)
    expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([
      200,
      'text/html; charset=utf-8',
      '<p>page</p>',
    ])
    expect((await fetch(`${server.url}etc/passwd`)).status).toBe(404)
  } finally {
    await server.close()
  }
})
