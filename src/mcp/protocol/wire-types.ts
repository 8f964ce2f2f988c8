// The MCP shapes toolgate's own declarations name, written from the specification (2025-11-25,
// whose shapes 2026-07-28 keeps for these) instead of re-exported from an SDK: what a program
// importing toolgate sees does not depend on which SDK line carries the wire, and its declarations
// need no SDK package installed. Objects stay open (`[key: string]: unknown`) as the schema's are,
// so an SDK's parsed value passes as one of these unchanged.

/** Free-form `_meta` of a request, result or object. */
export type McpMeta = { [key: string]: unknown }

/** A JSON-RPC request id. */
export type RequestId = string | number

/** A JSON-RPC request. */
export interface JSONRPCRequest {
  jsonrpc: '2.0'
  id: RequestId
  method: string
  params?: { [key: string]: unknown; _meta?: McpMeta }
}

/** A JSON-RPC notification. */
export interface JSONRPCNotification {
  jsonrpc: '2.0'
  method: string
  params?: { [key: string]: unknown; _meta?: McpMeta }
}

/** A JSON-RPC result response. */
export interface JSONRPCResultResponse {
  jsonrpc: '2.0'
  id: RequestId
  result: { [key: string]: unknown; _meta?: McpMeta }
}

/** A JSON-RPC error response (the id is absent when the request's could not be read). */
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0'
  id?: RequestId
  error: { code: number; message: string; data?: unknown }
}

/** Any one JSON-RPC message of MCP. */
export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResultResponse | JSONRPCErrorResponse

/** Who a request authenticated as, handed from the HTTP layer to each request handler. */
export interface AuthInfo {
  /** An id of the credential (toolgate never puts the secret here). */
  token: string
  clientId: string
  scopes: string[]
  /** Seconds since the epoch. */
  expiresAt?: number
  resource?: URL
  extra?: Record<string, unknown>
}

/** A `fetch` as MCP transports call it. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

/** Optional display hints on content and resources. */
export interface Annotations {
  audience?: ('user' | 'assistant')[]
  priority?: number
  lastModified?: string
}

/** An icon of a tool, prompt, resource or implementation. */
export interface Icon {
  src: string
  mimeType?: string
  sizes?: string[]
  theme?: 'light' | 'dark'
}

/** The text of a resource. */
export interface TextResourceContents {
  uri: string
  mimeType?: string
  text: string
  _meta?: McpMeta
  [key: string]: unknown
}

/** The bytes of a resource, base64. */
export interface BlobResourceContents {
  uri: string
  mimeType?: string
  blob: string
  _meta?: McpMeta
  [key: string]: unknown
}

/** Text content. */
export interface TextContent {
  type: 'text'
  text: string
  annotations?: Annotations
  _meta?: McpMeta
  [key: string]: unknown
}

/** Image content, base64. */
export interface ImageContent {
  type: 'image'
  data: string
  mimeType: string
  annotations?: Annotations
  _meta?: McpMeta
  [key: string]: unknown
}

/** Audio content, base64. */
export interface AudioContent {
  type: 'audio'
  data: string
  mimeType: string
  annotations?: Annotations
  _meta?: McpMeta
  [key: string]: unknown
}

/** A link to a resource. */
export interface ResourceLink extends Resource {
  type: 'resource_link'
}

/** A resource embedded in content. */
export interface EmbeddedResource {
  type: 'resource'
  resource: TextResourceContents | BlobResourceContents
  annotations?: Annotations
  _meta?: McpMeta
  [key: string]: unknown
}

/** One block of a tool result or prompt message. */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

/** A tool as `tools/list` lists it. */
export interface Tool {
  name: string
  title?: string
  description?: string
  inputSchema: { type: 'object'; properties?: { [key: string]: unknown }; required?: string[]; [key: string]: unknown }
  outputSchema?: {
    type: 'object'
    properties?: { [key: string]: unknown }
    required?: string[]
    [key: string]: unknown
  }
  annotations?: {
    title?: string
    readOnlyHint?: boolean
    destructiveHint?: boolean
    idempotentHint?: boolean
    openWorldHint?: boolean
  }
  execution?: { taskSupport?: 'required' | 'optional' | 'forbidden'; [key: string]: unknown }
  icons?: Icon[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** The result of `tools/call`. */
export interface CallToolResult {
  content: ContentBlock[]
  structuredContent?: { [key: string]: unknown }
  isError?: boolean
  _meta?: McpMeta
  [key: string]: unknown
}

/** A prompt as `prompts/list` lists it. */
export interface Prompt {
  name: string
  title?: string
  description?: string
  arguments?: { name: string; title?: string; description?: string; required?: boolean; [key: string]: unknown }[]
  icons?: Icon[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** One message of a prompt. */
export interface PromptMessage {
  role: 'user' | 'assistant'
  content: ContentBlock
  [key: string]: unknown
}

/** The result of `prompts/get`. */
export interface GetPromptResult {
  description?: string
  messages: PromptMessage[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** A resource as `resources/list` lists it. */
export interface Resource {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  size?: number
  annotations?: Annotations
  icons?: Icon[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** A resource template as `resources/templates/list` lists it. */
export interface ResourceTemplate {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  annotations?: Annotations
  icons?: Icon[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** The result of `resources/read`. */
export interface ReadResourceResult {
  contents: (TextResourceContents | BlobResourceContents)[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** A `completion/complete` request. */
export interface CompleteRequest {
  method: 'completion/complete'
  params: {
    ref:
      | { type: 'ref/prompt'; name: string; [key: string]: unknown }
      | { type: 'ref/resource'; uri: string; [key: string]: unknown }
    argument: { name: string; value: string }
    context?: { arguments?: { [key: string]: string } }
    _meta?: McpMeta
    [key: string]: unknown
  }
}

/** The result of `completion/complete`. */
export interface CompleteResult {
  completion: { values: string[]; total?: number; hasMore?: boolean; [key: string]: unknown }
  _meta?: McpMeta
  [key: string]: unknown
}

/** What an MCP client can do, as it declares at initialization. */
export interface ClientCapabilities {
  experimental?: { [key: string]: object }
  roots?: { listChanged?: boolean; [key: string]: unknown }
  sampling?: { context?: object; tools?: object; [key: string]: unknown }
  elicitation?: { form?: object; url?: object; [key: string]: unknown }
  tasks?: { [key: string]: unknown }
  extensions?: { [key: string]: unknown }
  [key: string]: unknown
}

/** What an MCP server can do, as it declares at initialization. */
export interface ServerCapabilities {
  experimental?: { [key: string]: object }
  logging?: object
  completions?: object
  prompts?: { listChanged?: boolean; [key: string]: unknown }
  resources?: { subscribe?: boolean; listChanged?: boolean; [key: string]: unknown }
  tools?: { listChanged?: boolean; [key: string]: unknown }
  tasks?: { [key: string]: unknown }
  extensions?: { [key: string]: unknown }
  [key: string]: unknown
}

/** A form elicitation's parameters. */
export interface ElicitRequestFormParams {
  mode?: 'form'
  message: string
  requestedSchema: {
    type: 'object'
    properties: { [key: string]: unknown }
    required?: string[]
    [key: string]: unknown
  }
  _meta?: McpMeta
  [key: string]: unknown
}

/** The answer to an elicitation. */
export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel'
  content?: { [key: string]: string | number | boolean | string[] }
  _meta?: McpMeta
  [key: string]: unknown
}

/** A task of the tasks utility. */
export interface Task {
  taskId: string
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  ttl: number | null
  pollInterval?: number
  [key: string]: unknown
}

/** A URL elicitation's parameters: the user is sent to `url` out of band. */
export interface ElicitRequestURLParams {
  mode: 'url'
  message: string
  elicitationId: string
  url: string
  _meta?: McpMeta
  [key: string]: unknown
}

/** One piece of a sampling message: text, image, audio, a tool use or a tool's result. */
export interface SamplingContent {
  type: string
  [key: string]: unknown
}

/** One message of a sampling conversation. */
export interface SamplingMessage {
  role: 'user' | 'assistant'
  content: SamplingContent | SamplingContent[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** A `sampling/createMessage` request's parameters. */
export interface CreateMessageRequestParams {
  messages: SamplingMessage[]
  maxTokens: number
  systemPrompt?: string
  includeContext?: 'none' | 'thisServer' | 'allServers'
  temperature?: number
  stopSequences?: string[]
  modelPreferences?: { [key: string]: unknown }
  metadata?: object
  tools?: Tool[]
  toolChoice?: { mode?: 'auto' | 'required' | 'none'; [key: string]: unknown }
  _meta?: McpMeta
  [key: string]: unknown
}

/** The model's message answering `sampling/createMessage` (one piece of content). */
export interface CreateMessageResult {
  role: 'user' | 'assistant'
  content: SamplingContent
  model: string
  stopReason?: string
  _meta?: McpMeta
  [key: string]: unknown
}

/** The model's message answering a `sampling/createMessage` that offered tools (content may be a list). */
export interface CreateMessageResultWithTools {
  role: 'user' | 'assistant'
  content: SamplingContent | SamplingContent[]
  model: string
  stopReason?: string
  _meta?: McpMeta
  [key: string]: unknown
}

/** A `roots/list` request. */
export interface ListRootsRequest {
  method: 'roots/list'
  params?: { _meta?: McpMeta; [key: string]: unknown }
}

/** A root the client lets the server work in. */
export interface Root {
  uri: string
  name?: string
  _meta?: McpMeta
  [key: string]: unknown
}

/** The answer to `roots/list`. */
export interface ListRootsResult {
  roots: Root[]
  _meta?: McpMeta
  [key: string]: unknown
}

/** A message's delivery details a transport hands on with it (who sent it, over which request). */
export type McpMessageExtra = { [key: string]: unknown }

/**
 * A ready MCP transport (the SDK's transports, v1 or v2, have this shape): it starts, sends
 * JSON-RPC messages, reports the ones it receives, and closes.
 */
export interface McpTransport {
  start(): Promise<void>
  send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId; [key: string]: unknown }): Promise<void>
  close(): Promise<void>
  onclose?(): void
  onerror?(error: Error): void
  onmessage?(message: JSONRPCMessage, extra?: McpMessageExtra): void
  sessionId?: string
  setProtocolVersion?(version: string): void
}

/** OAuth tokens as a token endpoint answers (RFC 6749 §5.1). */
export interface OAuthTokens {
  access_token: string
  token_type: string
  expires_in?: number
  refresh_token?: string
  scope?: string
  id_token?: string
  [key: string]: unknown
}

/** A client's registration metadata (RFC 7591 §2). */
export interface OAuthClientMetadata {
  redirect_uris: string[]
  token_endpoint_auth_method?: string
  grant_types?: string[]
  response_types?: string[]
  client_name?: string
  scope?: string
  [key: string]: unknown
}

/** A client's credentials, as registered or configured. */
export interface OAuthClientInformation {
  client_id: string
  client_secret?: string
  [key: string]: unknown
}

/**
 * The OAuth side of an HTTP upstream's client (the SDK's `OAuthClientProvider` has this shape):
 * where the tokens come from and go, and how the client authenticates to the token endpoint.
 * `createMcpOAuthProvider` makes one for the grants that need no person.
 */
export interface McpOAuthProvider {
  readonly redirectUrl: string | URL | undefined
  clientMetadataUrl?: string
  readonly clientMetadata: OAuthClientMetadata
  state?(): string | Promise<string>
  clientInformation(): OAuthClientInformation | undefined | Promise<OAuthClientInformation | undefined>
  saveClientInformation?(clientInformation: OAuthClientInformation): void | Promise<void>
  tokens(): OAuthTokens | undefined | Promise<OAuthTokens | undefined>
  saveTokens(tokens: OAuthTokens): void | Promise<void>
  redirectToAuthorization(authorizationUrl: URL): void | Promise<void>
  saveCodeVerifier(codeVerifier: string): void | Promise<void>
  codeVerifier(): string | Promise<string>
  addClientAuthentication?(
    headers: Headers,
    params: URLSearchParams,
    url: string | URL,
    metadata?: unknown,
  ): void | Promise<void>
  validateResourceURL?(serverUrl: string | URL, resource?: string): Promise<URL | undefined>
  invalidateCredentials?(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void | Promise<void>
  prepareTokenRequest?(scope?: string): URLSearchParams | Promise<URLSearchParams | undefined> | undefined
  saveDiscoveryState?(state: { [key: string]: unknown }): void | Promise<void>
  discoveryState?(): { [key: string]: unknown } | undefined | Promise<{ [key: string]: unknown } | undefined>
}
