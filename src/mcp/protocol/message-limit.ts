// The largest message toolgate reads by default, on every face: the SDK's stdio limit, kept so
// nothing that worked before is refused. Its own module, so serve's first script reads it without
// loading a transport.

/** The default limit on one message's bytes. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
