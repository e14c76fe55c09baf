import { getUserName } from './users.js'
import { shout } from './shout.js'
const ada = { first: 'Ada', last: 'Lovelace' }
console.log(`${getUserName(ada)} / ${shout(ada)}`)
