import assert from 'node:assert/strict'
import { slugify } from './slug.js'
assert.equal(slugify('Hello, World!'), 'hello-world')
assert.equal(slugify('  Many   spaces  '), 'many-spaces')
assert.equal(slugify('v2.0 release'), 'v2-0-release')
