import { afterEach, beforeEach } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { tempHome } from '../../../../packages/boot/app-boot/src/test-support/temp-home.ts'
import { saveEnvironment } from '../../../../packages/test-support/harness/src/world.ts'

export interface MockDeepSeek {
  /** This test's DSH_HOME. */
  readonly home: ReturnType<typeof tempHome>
  /** The mock DeepSeek server this test's dsh processes talk to. */
  readonly llm: MockServer
}

/**
 * For each test of the file: a fresh DSH_HOME and a mock DeepSeek server, set in this process's environment so
 * every `dsh` the test spawns inherits them (and put back after the test, on process.env itself).
 */
export function useMockDeepSeek(): MockDeepSeek {
  const restoreEnvironment = saveEnvironment()
  const current: { home?: ReturnType<typeof tempHome>; llm?: MockServer } = {}
  beforeEach(async () => {
    current.home = tempHome()
    current.llm = await startMockServer()
    Object.assign(process.env, {
      DSH_HOME: current.home.dir,
      DEEPSEEK_BASE_URL: current.llm.url,
      DEEPSEEK_API_KEY: 'test-key-0123456789',
    })
  })
  afterEach(async () => {
    restoreEnvironment()
    await current.llm?.close()
    current.home?.remove()
  })
  return {
    get home() {
      return current.home!
    },
    get llm() {
      return current.llm!
    },
  }
}
