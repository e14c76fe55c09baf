// The review of a session: its changed files and their diffs (docs/architecture.md, "Review and rewind").
export {
  sessionChanges,
  type ChangeStatus,
  type ChangesConfig,
  type FileChange,
  type SessionChanges,
} from './changes.ts'
export { ChangesError, SessionChangesService, SessionChangesService as default, type Config } from './service.ts'
