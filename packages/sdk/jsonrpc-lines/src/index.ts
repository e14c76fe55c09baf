// One JSON-RPC 2.0 implementation for both ends of the SDK protocol (docs/architecture.md, "Surfaces"):
// the framing (one JSON value per line) and a peer that sends and answers requests over it.
export { LineSplitter, type LineSink } from './lines.ts'
export { PeerRequestError, RequestTooLargeError, RpcPeer, type PeerOptions } from './peer.ts'
export { RpcError } from './error.ts'
