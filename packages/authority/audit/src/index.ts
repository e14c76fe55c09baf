// The authority audit of a session (docs/security.md): a pure reading of its log, for `dsh sessions show --audit`.
export { AUDITED_KINDS, auditSession, type AuditEntry, type AuditKind, type AuditableEvent } from './audit.ts'
export { renderAudit, type RenderOptions } from './render.ts'
