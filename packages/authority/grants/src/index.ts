// Standing grants and permission rules (docs/architecture.md, "Authority").
export type { Grant } from './events.ts'
export { readGrantsFile, writeGrantsFile, type GrantsFile, type WorkspaceGrant } from './file.ts'
export { ensureGrantKey, grantTag, readGrantKey, tagProblem } from './integrity.ts'
export { Grants, Grants as default, GrantError, type Config, type GrantListing, type IgnoredGrant } from './service.ts'
export { realPath, subjectOf } from './subject.ts'
