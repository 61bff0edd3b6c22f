export * from './types.js';
export { createListener, DEFAULT_MAX_REQUEST_SIZE, type Listener, type ListenerOptions, type ListenerDeps } from './listener.js';
export { envelope, errorReply, replyForError, type Envelope, type EnvelopeInput } from './response.js';
export { LIST_MARKER_HEADER, wrapConnection, createListVerbTranslator } from './list-method.js';
export { parseApiRequest, type RawHttpRequest, type ParseOptions } from './request.js';
