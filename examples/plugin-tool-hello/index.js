// An example dsh plugin (docs/extending.md, "Writing a dsh plugin"): one tool, `hello`, registered through
// ctx.tools. It imports nothing at run time; everything it uses comes through ctx. `@dsh/tools` is a peer
// dependency for its types and for the version of the tool contract it was written against.

/** The Cordis plugin's name, as logs and `--check` show it. */
export const name = 'tool-hello'

/** Services this plugin needs before it applies; package.json's dsh.plugin.injects must name each. */
export const inject = ['tools']

/**
 * Registers `hello`: it greets the name it is given. The row's config may set `greeting` (default "Hello").
 * @param {import('@dsh/cordis').Context} ctx
 * @param {{ greeting?: string }} config
 */
export function apply(ctx, config) {
  const greeting = typeof config?.greeting === 'string' && config.greeting ? config.greeting : 'Hello'
  ctx.tools.register(ctx, {
    name: 'hello',
    description: 'Greet someone by name. Returns one line of text.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 100, description: 'Who to greet.' } },
      required: ['name'],
      additionalProperties: false,
    },
    concurrencySafe: true,
    summarize: (args) => `hello ${args.name}`,
    async execute(args) {
      return `${greeting}, ${args.name}! (from the dsh-plugin-tool-hello plugin)`
    },
  })
}
