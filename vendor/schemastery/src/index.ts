// The one door to schemastery (see vendor/README.md). `export *` of a CJS-style namespace fails (TS2498).
import Schema from 'schemastery'

export { Schema }
export default Schema
