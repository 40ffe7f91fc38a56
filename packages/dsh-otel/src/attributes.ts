/**
 * Attribute names: the OpenTelemetry GenAI semantic conventions (development status, as of
 * semantic-conventions 1.45) and dsh's own, which lead from a span back to the session log.
 */

/** GenAI semantic-convention attribute names this package writes. */
export const GenAi = {
  OPERATION_NAME: 'gen_ai.operation.name',
  PROVIDER_NAME: 'gen_ai.provider.name',
  CONVERSATION_ID: 'gen_ai.conversation.id',
  AGENT_NAME: 'gen_ai.agent.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  REQUEST_TEMPERATURE: 'gen_ai.request.temperature',
  REQUEST_MAX_TOKENS: 'gen_ai.request.max_tokens',
  REQUEST_STOP_SEQUENCES: 'gen_ai.request.stop_sequences',
  RESPONSE_MODEL: 'gen_ai.response.model',
  RESPONSE_FINISH_REASONS: 'gen_ai.response.finish_reasons',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  USAGE_CACHE_READ_INPUT_TOKENS: 'gen_ai.usage.cache_read.input_tokens',
  USAGE_CACHE_CREATION_INPUT_TOKENS: 'gen_ai.usage.cache_creation.input_tokens',
  USAGE_REASONING_OUTPUT_TOKENS: 'gen_ai.usage.reasoning.output_tokens',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_TYPE: 'gen_ai.tool.type',
  TOOL_CALL_ID: 'gen_ai.tool.call.id',
  TOOL_CALL_ARGUMENTS: 'gen_ai.tool.call.arguments',
  TOOL_CALL_RESULT: 'gen_ai.tool.call.result',
  SYSTEM_INSTRUCTIONS: 'gen_ai.system_instructions',
  INPUT_MESSAGES: 'gen_ai.input.messages',
  OUTPUT_MESSAGES: 'gen_ai.output.messages',
  ERROR_TYPE: 'error.type',
} as const

/** dsh attributes: where in the session log a span's events are. */
export const Dsh = {
  SESSION_ID: 'dsh.session.id',
  TURN: 'dsh.turn',
  STEP: 'dsh.step',
  /** Seq of the event that opened the span (`turn/start`, `step/start`, `tool/call`). */
  SEQ: 'dsh.seq',
  /** Seq of the event that closed it (`turn/end`, `step/end`, `tool/result`). */
  END_SEQ: 'dsh.end_seq',
  /** Model requests: the log length the request was derived from (its events are the seqs below). */
  REQUEST_LOG_LENGTH: 'dsh.request.log_length',
  TURN_TRIGGER: 'dsh.turn.trigger',
  TURN_END_REASON: 'dsh.turn.end_reason',
  /** Compaction spans (dsh-compaction's `compaction/*` events). */
  COMPACTION_ID: 'dsh.compaction.id',
  COMPACTION_TRIGGER: 'dsh.compaction.trigger',
  COMPACTION_STRATEGY: 'dsh.compaction.strategy',
  COMPACTION_OUTCOME: 'dsh.compaction.outcome',
  COMPACTION_TOKENS_BEFORE: 'dsh.compaction.tokens_before',
  COMPACTION_TOKENS_AFTER: 'dsh.compaction.tokens_after',
} as const

/** `gen_ai.operation.name` values used here. */
export const Operation = {
  INVOKE_AGENT: 'invoke_agent',
  CHAT: 'chat',
  EXECUTE_TOOL: 'execute_tool',
} as const
