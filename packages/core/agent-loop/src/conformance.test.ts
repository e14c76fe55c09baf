import { fileURLToPath } from 'node:url'
import { describeLoopConformance } from './test-support/conformance.ts'

// The shipped loop as every bundle mounts it.
describeLoopConformance({ name: '@dsh/agent-loop', patch: '' })

// A deliberately minimal second loop in its place: the loop is replaceable, and the boundary check holds for it.
const minimal = fileURLToPath(new URL('./test-support/minimal-loop.ts', import.meta.url))
describeLoopConformance({ name: 'a minimal second loop', patch: `- id: agent-loop\n  name: '${minimal}'\n` })
