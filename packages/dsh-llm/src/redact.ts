/**
 * The one redaction step every rendered failure goes through: credentials in URLs, key-carrying
 * query parameters, authorization-style headers written out as text, and every registered secret.
 */
/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]'

/** Secrets shorter than this are not registered: replacing them everywhere would garble text. */
export const MIN_SECRET_LENGTH = 4

/** Query parameter names whose values are credentials (compared case-insensitively). */
export const SECRET_QUERY_PARAMETERS: readonly string[] = [
  'api-key',
  'api_key',
  'apikey',
  'key',
  'token',
  'access_token',
  'access-token',
  'refresh_token',
  'id_token',
  'auth',
  'authorization',
  'secret',
  'client_secret',
  'password',
  'sig',
  'signature',
  'subscription-key',
  'x-api-key',
]

/** Header names whose values are credentials (compared case-insensitively). */
export const SECRET_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'api-key',
  'x-api-key',
  'x-goog-api-key',
  'ocp-apim-subscription-key',
  'cookie',
]

const literal = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** `scheme://user:password@` → `scheme://[redacted]@`. */
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi
const QUERY = new RegExp(`([?&;](?:${SECRET_QUERY_PARAMETERS.map(literal).join('|')})=)[^&#\\s"'<>]+`, 'gi')
/** `authorization: Bearer x`, `"api-key":"x"`, `x-api-key=x`: the value after the header's name. */
const HEADER = new RegExp(
  `(\\b(?:${SECRET_HEADERS.map(literal).join('|')})["']?\\s*[:=]\\s*["']?)((?:(?:bearer|basic|token)\\s+)?)([^\\s"',;}\\]]+)`,
  'gi',
)
/** A bearer token outside a header (`Bearer sk-...` quoted in a provider's message). */
const BEARER = /\b([Bb]earer)\s+[A-Za-z0-9._~+/-]{8,}=*/g
const ANY_PATTERN = /:\/\/[^\s/?#@]+@|[?&;][a-z_-]+=|authorization|api-key|bearer|cookie|subscription-key/i

/** Registered secrets, longest first (so a secret containing another is replaced whole). */
let secrets: readonly string[] = []

/**
 * Registers `value` (an API key, a token, a password) so that `redact` replaces every occurrence of
 * it, in this process, from now on. Adapters register the credentials they are configured with; an
 * app may register others (a tool's token). Values shorter than `MIN_SECRET_LENGTH` characters and
 * non-strings are ignored. Never throws; registering a value twice is a no-op.
 */
export function registerSecret(value: unknown): void {
  if (typeof value !== 'string') return
  const trimmed = value.trim()
  for (const candidate of new Set([value, trimmed])) {
    if (candidate.length < MIN_SECRET_LENGTH || secrets.includes(candidate)) continue
    secrets = [...secrets, candidate].sort((a, b) => b.length - a.length)
  }
}

/** Registers the credentials a URL carries: its userinfo and the values of secret query parameters. */
export function registerUrlSecrets(url: string): void {
  if (!URL.canParse(url)) return
  const parsed = new URL(url)
  if (parsed.username !== '') registerSecret(decodeURIComponent(parsed.username))
  if (parsed.password !== '') registerSecret(decodeURIComponent(parsed.password))
  for (const [name, value] of parsed.searchParams) {
    if (SECRET_QUERY_PARAMETERS.includes(name.toLowerCase())) registerSecret(value)
  }
}

/** Whether `name` is a header whose value is a credential (`authorization`, `api-key`, ...). */
export function isSecretHeader(name: string): boolean {
  return SECRET_HEADERS.includes(name.toLowerCase())
}

/**
 * `text` with credentials replaced by `[redacted]`: URL userinfo, values of secret query parameters
 * (`SECRET_QUERY_PARAMETERS`), values written after a secret header's name (`SECRET_HEADERS`),
 * `Bearer`/`Basic` tokens, and every registered secret. Total: returns `text` itself when nothing
 * matched, and a non-string unchanged.
 */
export function redact(text: string): string {
  if (typeof text !== 'string') return text
  let out = text
  for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED)
  if (!ANY_PATTERN.test(out)) return out
  return out
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(QUERY, `$1${REDACTED}`)
    .replace(HEADER, (whole, name: string, scheme: string, value: string) =>
      value.startsWith(REDACTED.slice(0, -1)) ? whole : `${name}${scheme}${REDACTED}`,
    )
    .replace(BEARER, `$1 ${REDACTED}`)
}

/** The fields of an `LlmFailure` that are text a provider or transport may have filled in. */
interface FailureText {
  readonly message: string
  readonly providerCode?: string
  readonly requestId?: string
}

/**
 * `failure` (an `LlmFailure`) with its `message`, `providerCode` and `requestId` redacted, as a
 * frozen copy; the same object when nothing needed redacting.
 */
export function redactFailure<F extends FailureText>(failure: F): F {
  const message = redact(failure.message)
  const providerCode = failure.providerCode === undefined ? undefined : redact(failure.providerCode)
  const requestId = failure.requestId === undefined ? undefined : redact(failure.requestId)
  if (
    message === failure.message &&
    providerCode === failure.providerCode &&
    requestId === failure.requestId
  ) {
    return failure
  }
  const copy: { -readonly [K in keyof FailureText]: FailureText[K] } = { ...failure, message }
  if (providerCode !== undefined) copy.providerCode = providerCode
  if (requestId !== undefined) copy.requestId = requestId
  return Object.freeze(copy) as F
}

/**
 * A thrown value safe to render: an `Error` whose message, stack, string own properties or `cause`
 * chain (followed to a depth of 8) hold a credential is copied — same prototype, name and `code` —
 * with each redacted; a string is redacted; anything else, and a clean error, is returned as it is.
 */
export function redactError<T>(error: T, depth = 0): T {
  if (typeof error === 'string') return redact(error) as T
  if (!(error instanceof Error) || depth >= 8) return error
  const cause: unknown = error.cause
  const redactedCause = cause === undefined ? undefined : redactError(cause, depth + 1)
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(error)
  let changed = redactedCause !== cause
  for (const [name, descriptor] of Object.entries(descriptors)) {
    if (name === 'cause' || typeof descriptor.value !== 'string') continue
    const clean = redact(descriptor.value)
    if (clean !== descriptor.value) {
      changed = true
      descriptor.value = clean
    }
  }
  // Node 22+ (V8 12+) keeps `stack` as an own accessor that reads the receiver's internal slot: on a
  // copy it reads `undefined`, and as an accessor it escaped the string scan above. Read it here.
  const stackDescriptor = descriptors.stack
  if (stackDescriptor !== undefined && stackDescriptor.get !== undefined) {
    const stack: unknown = error.stack
    if (typeof stack === 'string') {
      const clean = redact(stack)
      if (clean !== stack) changed = true
      descriptors.stack = { value: clean, writable: true, configurable: true, enumerable: false }
    }
  }
  if (!changed) return error
  const causeDescriptor = descriptors.cause
  if (causeDescriptor !== undefined) causeDescriptor.value = redactedCause
  return Object.create(Object.getPrototypeOf(error) as object, descriptors) as T
}
