// Memory through the TypeScript SDK driving the real runtime (`dsh --profile sdk`) and the mock model server: the
// program's approval callback is the person who accepts, `session.command('/memory …')` the person who deletes.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { startMockServer } from '@dsh/llm-mock-server'
import { Harness } from '@dsh/sdk'
import { tempDir } from '@dsh/test-harness/world'

test('an SDK client accepts a proposal; the next session sends it; /memory delete takes it out of the one after', async () => {
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const home = tempDir('dsh-memory-sdk-home-')
  writeFileSync(join(home, 'settings.yaml'), 'sessions.autoTitle: false\n')
  const asked: string[] = []
  const harness = await Harness.start({
    cwd: tempDir('dsh-memory-sdk-ws-'),
    env: { DSH_HOME: home, DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
    onApproval: (request) => (asked.push(request.summary), 'allow_once'),
  })
  onTestFinished(async () => {
    await harness.close()
  })

  llm.enqueue(
    { toolCalls: [{ id: 'm', name: 'memory', arguments: { scope: 'workspace', text: 'Build with make -j4' } }] },
    { text: 'noted' },
  )
  const first = await (await harness.session()).run('remember how to build')
  expect(asked).toEqual(['remember (workspace): Build with make -j4'])
  expect(first.events.find((event) => event.type === ('memory/decided' as string))).toMatchObject({
    data: { callId: 'm', outcome: 'accepted', entry: 1 },
  })

  llm.enqueue({ text: 'hi' })
  const second = await harness.session()
  await second.run('hello')
  expect(JSON.stringify(llm.requests.at(-1)!.body.messages)).toContain('1. Build with make -j4')
  const deleted = await second.command('/memory delete workspace 1')
  expect(deleted.output).toContain('Deleted workspace entry 1.')

  llm.enqueue({ text: 'hi' })
  await (await harness.session()).run('hello')
  expect(JSON.stringify(llm.requests.at(-1)!.body.messages)).not.toContain('make -j4')
})
