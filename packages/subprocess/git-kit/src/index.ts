// The one way dsh runs git itself (docs/security.md, "Git that dsh runs").
export { filterDrivers, GIT_SAFE_CONFIG, gitArgv, gitEnvironment, GitError, gitFilterOverrides, runGit, type GitRunOptions } from './git.ts'
