/** Runs the agent of docs/quick-start.md (snippets/quick-start.ts). */
import { messageText } from 'dsh-llm'
import { expect, it } from 'vitest'
import { askTheAgent } from '../snippets/quick-start.ts'

it('answers after one tool call; the history holds prompt, call, result and answer', async () => {
  const history = await askTheAgent('What is 2 + 40?')
  expect(history.map((message) => [message.role, message.source.kind, messageText(message)])).toEqual([
    ['user', 'user', 'What is 2 + 40?'],
    ['assistant', 'model', ''],
    ['user', 'tool', ''],
    ['assistant', 'model', 'It is 42.'],
  ])
  expect(history[2]?.content).toEqual([
    { type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '42' }] },
  ])
})
