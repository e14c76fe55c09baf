// The session log (docs/architecture.md, "The session log").
export * from './events.ts'
export {
  ARGUMENTS_PRUNED_KIND,
  CONTEXT_KINDS,
  deriveEntries,
  deriveMessages,
  isInterruptedAnswer,
  MessageFold,
  type HistoryEntry,
} from './derive.ts'
export { mapAtMost } from './at-most.ts'
export { findNonPlain, deepFreeze } from './plain-json.ts'
export { deriveTurnRequest, logRequestHeader, samplingOf, sessionTurnRequest, type DerivedRequest } from './request.ts'
export { planRepair, type RepairStep } from './repair.ts'
export { Session, openStepOf, openTurnAt } from './session.ts'
export { Sessions, Sessions as default, newSessionId } from './sessions.ts'
export { SessionError, type SessionStorage, type SessionSummary, type StoredCheck, type StoredLog } from './storage.ts'
export { CORE_SPECS } from './validate.ts'
export {
  CORE_EVENT_SCHEMAS,
  INBOX_MODES,
  ErrorSchema,
  RouteSchema,
  UsageSchema,
  DSH_STOPPED,
  agrees,
  checkShape,
  oneOf,
  type CoreEventData,
  type CoreEventKind,
  type Same,
} from './schema.ts'
// The owners of other kinds declare theirs with the same TypeBox (one version in the tree; docs/architecture.md).
export { Type, type Static, type TSchema } from '@sinclair/typebox'
