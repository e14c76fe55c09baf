// The web surface's host (docs/architecture.md, "Surfaces").
export { Webserver, Webserver as default, type CallInfo, type Config, type MethodSpec } from './webserver.ts'
export type { ChannelSpec, WebClient } from './socket-client.ts'
export { isInside, OpenableFolders } from './folders.ts'
export { WebError, describeFailure, type WebErrorCode } from './errors.ts'
export { checkHost, checkOrigin, isLoopbackAddress, isLoopbackName } from './guard.ts'
export { cookieName, LINK_PATH } from './sign-in.ts'
export { signInWithLink } from './client.ts'
