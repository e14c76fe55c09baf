// A vitest setup file (vitest.config.ts): test files share their worker process, so a file must leave the
// process as it found it. Fails the file that did not: one that replaced `process.env` with a copy (the copy is
// detached from the real environment, so `os.homedir()` and later files read stale values: seen as secret
// paths of a fake home no longer refused), changed the working directory, or left HOME pointing elsewhere.
import { afterAll } from 'vitest'

const env = process.env
const cwd = process.cwd()
const home = process.env.HOME

afterAll(() => {
  const problems = []
  if (process.env !== env)
    problems.push('replaced process.env with another object (restore variables on process.env itself)')
  if (process.cwd() !== cwd) problems.push(`left the working directory at ${process.cwd()} (was ${cwd})`)
  if (process.env.HOME !== home) problems.push(`left HOME at ${process.env.HOME} (was ${home})`)
  if (problems.length) throw new Error(`this test file shares its worker with others and ${problems.join('; ')}`)
})
