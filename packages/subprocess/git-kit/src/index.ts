// The one way dsh runs git itself (docs/security.md, "Defences and the tests that show them").
export {
  filterDrivers,
  GIT_SAFE_CONFIG,
  gitArgv,
  gitEnvironment,
  GitError,
  gitFilterOverrides,
  runGit,
  type GitRunOptions,
} from './git.ts'
