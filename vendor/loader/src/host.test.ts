import { expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import { deferJs, mountLoader, toEntryOptions } from './index.ts'

// Pins the upstream behaviours the host relies on; an upgrade that breaks one fails here first.
async function host(plugins: Record<string, any>) {
  const root = new Context()
  const errors: string[] = []
  root.on('internal/error' as any, (error: any) => errors.push(String(error?.message ?? error)))
  const loader = await mountLoader(root, {
    baseUrl: 'file:///app/',
    resolve: async (name) => {
      if (!plugins[name]) throw new Error(`unknown plugin ${name}`)
      return plugins[name]
    },
  })
  return { root, loader, errors }
}

test('baseUrl is a plain property of the root context', async () => {
  const { root } = await host({})
  expect((root as any).baseUrl).toBe('file:///app/')
})

test('names resolve through the app resolver and groups through the builtin', async () => {
  const seen: unknown[] = []
  const { loader, errors } = await host({
    probe: {
      name: 'probe',
      apply(_: Context, config: unknown) {
        seen.push(config)
      },
    },
  })
  await loader.root.update([
    toEntryOptions({ id: 'g', name: 'group', children: [{ id: 'p', name: 'probe', config: { n: 1 } }] }),
    toEntryOptions({ id: 'x', name: 'missing' }),
  ])
  await loader.await()
  expect(seen).toEqual([{ n: 1 }])
  expect(errors).toEqual(['unknown plugin missing'])
})

test('deferred expressions see injected services and can disable the row', async () => {
  const seen: unknown[] = []
  const provider = {
    name: 'provider',
    apply(ctx: Context) {
      ctx.effect(() => (ctx as any).reflect.provide('numbers', { two: 2 }))
    },
  }
  const user = {
    name: 'user',
    inject: ['numbers'],
    apply(_: Context, config: unknown) {
      seen.push(config)
    },
  }
  const { loader } = await host({ provider, user })
  await loader.root.update([
    toEntryOptions({ id: 'on', name: 'user', config: { n: deferJs('numbers.two * 21') } }),
    toEntryOptions({ id: 'off', name: 'user', disabled: deferJs('numbers.two === 2'), config: { n: 0 } }),
    toEntryOptions({ id: 'provider', name: 'provider' }),
  ])
  await loader.await()
  expect(seen).toEqual([{ n: 42 }])
})
