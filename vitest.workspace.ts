/** The test projects, one per package. The root vitest.config.ts passes this list as `test.projects`. */
export const projects: string[] = [
  'packages/dsh-llm',
  'packages/dsh-llm-openai',
  'packages/dsh-llm-ai-sdk',
  'packages/dsh-session',
  'packages/dsh-agent-loop',
  'packages/dsh-invariants',
  'packages/dsh-otel',
  'packages/dsh-replay',
  'packages/dsh-viewer',
  'packages/dsh-mcp',
  'packages/dsh-session-postgres',
  'packages/dsh-fleet',
  'packages/dsh-compaction',
  'examples/fleet',
  'examples/coding-agent',
  'bench',
]
