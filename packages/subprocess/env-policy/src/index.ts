// The environment of model-started processes (docs/architecture.md, "Execution world").
export {
  DEFAULT_INHERITED,
  isSecretName,
  NAME_GLOB,
  nameMatcher,
  SECRET_NAME_PATTERNS,
  VARIABLE_NAME,
} from './names.ts'
export { checkEnvPolicy, EMPTY_POLICY, type EnvPolicy, scrubEnvironment, type ScrubbedEnvironment } from './policy.ts'
