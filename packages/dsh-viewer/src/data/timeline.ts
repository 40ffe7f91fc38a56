/** Turns, steps and tool calls from the log, with times and token usage. */
import type { ContentBlock, Usage } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import type { RequestView, StepView, ToolView, TurnView } from './types.ts'
import { addUsage, ZERO_USAGE } from './usage.ts'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type TurnDraft = Mutable<TurnView> & { steps: StepDraft[] }
type ToolDraft = Mutable<ToolView>
type StepDraft = Mutable<StepView> & { tools: ToolDraft[]; requests: number[] }

function text(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')
}

/**
 * Folds `events` into turns → steps → tool calls. `requests` are attached to their step (by turn and
 * step number) and their usage summed into step and turn. Events outside any turn are not part of the
 * timeline. A `tool/result` without a `tool/call` (a call that never started) still gets a row.
 */
export function timeline(events: readonly SessionEvent[], requests: readonly RequestView[]): TurnView[] {
  const turns: TurnDraft[] = []
  let turn: TurnDraft | undefined
  let step: StepDraft | undefined
  events.forEach((event, index) => {
    const data = event.data as Record<string, unknown>
    switch (event.type) {
      case 'turn/start':
        turn = {
          turn: data.turn as number,
          start: index,
          startTime: event.time,
          trigger: (data.trigger as { kind: string }).kind,
          usage: ZERO_USAGE,
          steps: [],
        }
        turns.push(turn)
        return
      case 'turn/end':
        if (turn === undefined) return
        turn.end = index
        turn.endTime = event.time
        turn.endReason = (data.reason as { kind: string }).kind
        turn = undefined
        step = undefined
        return
      case 'step/start':
        step = {
          turn: data.turn as number,
          step: data.step as number,
          start: index,
          startTime: event.time,
          usage: ZERO_USAGE,
          requests: [],
          tools: [],
        }
        turn?.steps.push(step)
        return
      case 'step/end':
        if (step === undefined) return
        step.end = index
        step.endTime = event.time
        step = undefined
        return
      case 'tool/call':
        step?.tools.push({
          callId: data.callId as string,
          name: data.name as string,
          arguments: data.arguments as string,
          call: index,
          startTime: event.time,
          isError: false,
        })
        return
      case 'tool/result': {
        const block = (
          data.message as { content: [{ toolCallId: string; isError?: boolean; content: ContentBlock[] }] }
        ).content[0]
        let tool: ToolDraft | undefined = step?.tools.find(
          (t) => t.callId === block.toolCallId && t.result === undefined,
        )
        if (tool === undefined) {
          tool = { callId: block.toolCallId, name: '(not started)', arguments: '', isError: false }
          step?.tools.push(tool)
        }
        tool.result = index
        tool.endTime = event.time
        tool.resultText = text(block.content)
        tool.isError = block.isError === true
        const error = data.error as { code: string } | undefined
        if (error !== undefined) tool.errorCode = error.code
        return
      }
    }
  })
  const steps = new Map<string, StepDraft>()
  for (const t of turns) for (const s of t.steps) steps.set(`${s.turn}/${s.step}`, s)
  for (const request of requests) {
    const s = steps.get(`${request.turn}/${request.step}`)
    if (s === undefined) continue
    s.requests.push(request.number)
    if (request.usage !== undefined) s.usage = addUsage(s.usage, request.usage)
  }
  for (const t of turns) t.usage = t.steps.reduce<Usage>((sum, s) => addUsage(sum, s.usage), ZERO_USAGE)
  return turns
}
