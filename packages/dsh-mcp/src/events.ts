/** dsh-mcp's cordis events. Each is a contained notification (emit): a throwing listener is logged. */
import type { McpProgress, McpServerStatus, McpWarning } from './types.ts'

declare module 'cordis' {
  interface Events {
    /** Emit (contained): a server's connection changed state (connecting, ready, reconnecting, failed, closed) or its tool set changed. */
    'mcp/status'(status: McpServerStatus): void
    /** Emit (contained): a server reported progress on a running tool call (`notifications/progress`). */
    'mcp/progress'(progress: McpProgress): void
    /** Emit (contained): a tool was skipped or a re-sync failed (the previous tool set stays). */
    'mcp/warning'(warning: McpWarning): void
  }
}
