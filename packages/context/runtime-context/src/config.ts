import Schema from '@dsh/schemastery'

export interface Config {
  os: boolean
  date: boolean
  shell: boolean
  sandbox: boolean
  git: boolean
  commits: number
  statusFiles: number
  overview: number
  commands: boolean
  gitTimeoutMs: number
  maxCommandChars: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  os: Schema.boolean().default(true).description('Tell the operating system and its release.'),
  date: Schema.boolean().default(true).description("Tell today's date (a new day logs a new runtime context)."),
  shell: Schema.boolean().default(true).description("Tell the user's shell ($SHELL)."),
  sandbox: Schema.boolean().default(true).description('Tell the sandbox mode in force.'),
  git: Schema.boolean()
    .default(true)
    .description(
      'Tell the git branch and a summary of the status (git runs confined read-only; without a sandbox backend it is not run).',
    ),
  commits: Schema.natural().default(5).description('Recent commits told (0: none).'),
  statusFiles: Schema.natural()
    .default(10)
    .description('Changed files named in the status summary (the rest are counted).'),
  overview: Schema.natural()
    .default(40)
    .description('Top-level entries of the working directory listed (0: no overview).'),
  commands: Schema.boolean()
    .default(true)
    .description(
      'Tell the test, build and lint commands found in package.json, Makefile, pyproject.toml, Cargo.toml and go.mod.',
    ),
  gitTimeoutMs: Schema.natural().min(1).default(5_000).description('Deadline of each git command (ms).'),
  maxCommandChars: Schema.natural()
    .min(1)
    .default(120)
    .description('A package.json script or a commit line longer than this is cut.'),
})
