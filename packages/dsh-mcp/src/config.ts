/** Validation of `McpTools`' configuration, and its tool filter. */
import { McpErrorCode, McpToolsError } from './errors.ts'
import { MAX_SERVER_NAME_LENGTH, SERVER_NAME } from './names.ts'
import type { McpServerConfig, McpToolsConfig } from './types.ts'

/** The configuration with every default filled in. */
export interface ResolvedConfig {
  readonly servers: ReadonlyMap<string, McpServerConfig>
  readonly timeoutMs: number
  readonly connectTimeoutMs: number
  readonly accepts: (server: string, tool: string) => boolean
  readonly reconnect: {
    readonly initialDelayMs: number
    readonly maxDelayMs: number
    readonly maxAttempts: number
  }
}

const DEFAULT_TIMEOUT_MS = 60_000
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

function invalid(message: string): McpToolsError {
  return new McpToolsError(McpErrorCode.INVALID_CONFIG, `McpTools: ${message}`)
}

function positive(name: string, value: unknown, fallback: number, infinite: boolean): number {
  if (value === undefined) return fallback
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value <= 0 ||
    (!infinite && !Number.isFinite(value))
  ) {
    throw invalid(
      `${name} must be a ${infinite ? 'number > 0 (Infinity for none)' : 'finite number > 0'}, got ${String(value)}`,
    )
  }
  return value
}

function strings(where: string, value: unknown): readonly string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw invalid(`${where} must be an array of strings`)
  }
  return value as string[]
}

function checkServer(name: string, server: unknown): McpServerConfig {
  if (name.length > MAX_SERVER_NAME_LENGTH || !SERVER_NAME.test(name)) {
    throw invalid(
      `server name ${JSON.stringify(name)} must be 1-${MAX_SERVER_NAME_LENGTH} characters of letters, digits and -, in runs joined by single _`,
    )
  }
  if (server === null || typeof server !== 'object') throw invalid(`server "${name}" must be an object`)
  const config = server as Record<string, unknown>
  const kinds = ['command', 'url', 'transport'].filter((key) => key in config)
  if (kinds.length !== 1) {
    throw invalid(
      `server "${name}" needs exactly one of command (stdio), url (Streamable HTTP) or transport (a factory)`,
    )
  }
  if (kinds[0] === 'transport') {
    if (typeof config.transport !== 'function')
      throw invalid(`server "${name}": transport must be a function`)
    return server as McpServerConfig
  }
  if (kinds[0] === 'command') {
    if (typeof config.command !== 'string' || config.command === '') {
      throw invalid(`server "${name}": command must be a non-empty string`)
    }
    if (config.args !== undefined) strings(`server "${name}": args`, config.args)
    if (config.cwd !== undefined && typeof config.cwd !== 'string') {
      throw invalid(`server "${name}": cwd must be a string`)
    }
    if (config.env !== undefined) {
      if (config.env === null || typeof config.env !== 'object')
        throw invalid(`server "${name}": env must be an object`)
      strings(`server "${name}": env values`, Object.values(config.env))
    }
    if (config.stderr !== undefined && !['inherit', 'ignore'].includes(config.stderr as string)) {
      throw invalid(`server "${name}": stderr must be 'inherit' or 'ignore'`)
    }
    return server as McpServerConfig
  }
  let url: URL
  try {
    url = new URL(String(config.url))
  } catch {
    throw invalid(`server "${name}": url ${JSON.stringify(String(config.url))} is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`server "${name}": url must be http: or https:, got ${url.protocol}`)
  }
  if (config.headers !== undefined) {
    if (config.headers === null || typeof config.headers !== 'object') {
      throw invalid(`server "${name}": headers must be an object`)
    }
    strings(`server "${name}": header values`, Object.values(config.headers))
  }
  return server as McpServerConfig
}

function glob(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
  return new RegExp(`^${escaped.join('.*')}$`)
}

/**
 * Checks `config` and fills in the defaults. Throws `McpToolsError` `INVALID_CONFIG` naming the
 * server or option at fault.
 */
export function resolveConfig(config: McpToolsConfig | undefined): ResolvedConfig {
  if (config === undefined || config === null || typeof config !== 'object') {
    throw invalid('needs a config with servers')
  }
  if (config.servers === null || typeof config.servers !== 'object') {
    throw invalid('servers must be an object of server configs by name')
  }
  const servers = new Map<string, McpServerConfig>()
  for (const [name, server] of Object.entries(config.servers)) servers.set(name, checkServer(name, server))
  const include = config.include === undefined ? undefined : strings('include', config.include).map(glob)
  const exclude = config.exclude === undefined ? [] : strings('exclude', config.exclude).map(glob)
  const reconnect = config.reconnect === false ? { maxAttempts: 0 } : (config.reconnect ?? {})
  const maxAttempts = reconnect.maxAttempts ?? Number.POSITIVE_INFINITY
  if (typeof maxAttempts !== 'number' || Number.isNaN(maxAttempts) || maxAttempts < 0) {
    throw invalid(`reconnect.maxAttempts must be a number >= 0, got ${String(maxAttempts)}`)
  }
  return {
    servers,
    timeoutMs: positive('timeoutMs', config.timeoutMs, DEFAULT_TIMEOUT_MS, true),
    connectTimeoutMs: positive(
      'connectTimeoutMs',
      config.connectTimeoutMs,
      DEFAULT_CONNECT_TIMEOUT_MS,
      false,
    ),
    accepts: (server, tool) => {
      const key = `${server}/${tool}`
      if (include !== undefined && !include.some((pattern) => pattern.test(key))) return false
      return !exclude.some((pattern) => pattern.test(key))
    },
    reconnect: {
      initialDelayMs: positive(
        'reconnect.initialDelayMs',
        'initialDelayMs' in reconnect ? reconnect.initialDelayMs : undefined,
        250,
        false,
      ),
      maxDelayMs: positive(
        'reconnect.maxDelayMs',
        'maxDelayMs' in reconnect ? reconnect.maxDelayMs : undefined,
        30_000,
        false,
      ),
      maxAttempts,
    },
  }
}
