import { legacyBanner } from './legacy.js'
if (process.env.LEGACY) console.log(legacyBanner())
console.log('ready')
