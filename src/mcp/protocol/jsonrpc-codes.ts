// Every JSON-RPC error code toolgate sends or recognizes, named once: JSON-RPC 2.0's own, the
// ones MCP and its SDKs give the implementation-defined server range (-32000 to -32099), and
// toolgate's. Two names may share a number where the protocol reuses it for different things.

/** JSON-RPC error codes by meaning. */
export const JsonRpcCode = {
  /** The message is not JSON. */
  ParseError: -32700,
  /** The JSON is not a valid request (or not allowed now: a second initialize). */
  InvalidRequest: -32600,
  /** The method does not exist, or the peer did not declare the capability it needs. */
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** A transport-level refusal of a Streamable HTTP request (bad headers, no session, draining). */
  ServerError: -32000,
  /** The connection closed before the answer (the SDK's `ConnectionClosed`; same number as `ServerError`). */
  ConnectionClosed: -32000,
  /** No answer in time (the SDK's `RequestTimeout`). */
  RequestTimeout: -32001,
  /** A Streamable HTTP session the server does not know (same number as `RequestTimeout`). */
  SessionNotFound: -32001,
  /** MCP: the resource does not exist (or is hidden from this caller). */
  ResourceNotFound: -32002,
  /** toolgate: a tool result withheld because its journal record could not be committed to the store. */
  ResultNotRecorded: -32010,
  /** MCP 2026-07-28: the `Mcp-Method`/`Mcp-Name` headers do not match the body. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability the client did not declare. */
  MissingRequiredClientCapability: -32021,
  /** MCP 2026-07-28: the server does not speak the requested protocol revision. */
  UnsupportedProtocolVersion: -32022,
  /** MCP: the request needs the user to visit a URL first (URL elicitation). */
  UrlElicitationRequired: -32042,
  /** The request was cancelled (as LSP numbers it; MCP defines no code of its own for it). */
  RequestCancelled: -32800,
} as const
