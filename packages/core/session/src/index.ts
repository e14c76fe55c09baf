// The session log (docs/architecture.md, "The session log"; DESIGN §5).
export * from './events.ts'
export { deriveEntries, deriveMessages, MessageFold, type HistoryEntry } from './derive.ts'
export { findNonPlain, deepFreeze } from './plain-json.ts'
export { deriveTurnRequest, logRequestHeader, samplingOf, type DerivedRequest } from './request.ts'
export { planRepair, type RepairStep } from './repair.ts'
export { Session, openTurnAt } from './session.ts'
export { Sessions, Sessions as default, newSessionId } from './sessions.ts'
export { SessionError, type SessionStorage, type SessionSummary } from './storage.ts'
