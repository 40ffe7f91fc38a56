export { CLIENT_INFO } from './connection.ts'
export { base64Bytes, contentBlock, resultBlocks } from './content.ts'
export { McpCallErrorCode, McpErrorCode, McpToolsError } from './errors.ts'
export type {} from './events.ts'
export { MAX_SERVER_NAME_LENGTH, MAX_TOOL_NAME_LENGTH, toolName, toolNames } from './names.ts'
export { McpTools, McpTools as default, McpToolsService, type WhenReadyOptions } from './plugin.ts'
export type {
  CustomServerConfig,
  HttpServerConfig,
  McpProgress,
  McpServerConfig,
  McpServerState,
  McpServerStatus,
  McpToolsConfig,
  McpWarning,
  ReconnectOptions,
  StdioServerConfig,
} from './types.ts'
