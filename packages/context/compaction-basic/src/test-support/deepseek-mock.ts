import { bootComposition, type Harness } from '@dsh/test-harness'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'

/**
 * A real composition whose model is the real DeepSeek adapter against the mock server `llm`, with no retries
 * (a refusal is the test's to see). `deepseekConfig` adds to the adapter's row (a catalog, say); `rows` are
 * further patch rows.
 */
export async function bootOnMock(
  llm: MockServer,
  options: { deepseekConfig?: string; rows?: string } = {},
): Promise<Harness> {
  const harness = await bootComposition({
    patch: `${options.rows ?? ''}
- id: agents
  config: { route: { provider: deepseek, model: deepseek-v4-flash } }
- id: llm-deepseek
  config:
    baseUrl: '${llm.url}'
${options.deepseekConfig ? `    ${options.deepseekConfig}\n` : ''}- id: llm-retry
  config: { maxRetries: 0 }
`,
  })
  await harness.root.credentials.set('DEEPSEEK_API_KEY', 'sk-mock-test-key')
  return harness
}

/**
 * One mock provider for a test file (started once, its script and requests reset after each test) and a
 * `boot` whose composition is disposed after each test.
 */
export function useMockProvider(contextWindowTokens: number) {
  let llm: MockServer | undefined
  let harness: Harness | undefined
  beforeAll(async () => {
    llm = await startMockServer({ contextWindowTokens })
  })
  afterEach(async () => {
    await harness?.dispose()
    harness = undefined
    llm!.reset()
    llm!.respondWith(undefined)
  })
  afterAll(() => llm?.close())
  return {
    get llm(): MockServer {
      return llm!
    },
    boot: async (): Promise<Harness> => (harness = await bootOnMock(llm!)),
  }
}
