/** The one line the demo prints when the configured model cannot be used (wrong URL, bad key, ...). */
import { type LlmFailure, redact } from 'dsh-llm'
import type { Session } from 'dsh-session'
import type { ModelChoice } from './model.ts'

/** The failure the session's last turn ended with, or `undefined` when it did not end in an error. */
export function lastTurnFailure(session: Session): LlmFailure | undefined {
  for (let i = session.events.length - 1; i >= 0; i--) {
    const event = session.events[i]
    if (event?.type !== 'turn/end') continue
    return event.data.reason.kind === 'error' ? event.data.reason.failure : undefined
  }
  return undefined
}

/**
 * One line for stderr: what is wrong in the user's terms (which variable to check), then the
 * adapter's own message, which names the provider, model, HTTP status, provider code and request id.
 */
export function failureLine(failure: LlmFailure, choice: ModelChoice): string {
  return redact(`dsh demo: ${hint(failure.code, choice)}: ${failure.message.replace(/\s+/g, ' ')}`)
}

function hint(code: string, choice: ModelChoice): string {
  switch (code) {
    case 'TRANSPORT':
    case 'TIMEOUT':
      return `cannot reach the model server at ${choice.baseURL} (check DSH_BASE_URL)`
    case 'NOT_FOUND':
      return `${choice.baseURL} has no chat completions endpoint (check DSH_BASE_URL; it usually ends in /v1)`
    case 'AUTH':
      return 'the server refused the API key (check DSH_API_KEY)'
    case 'MODEL_NOT_FOUND':
      return `the server does not know the model ${choice.model} (check DSH_MODEL)`
    case 'QUOTA_EXCEEDED':
      return 'the account is out of quota or credit'
    default:
      return `the model call failed (${code})`
  }
}
