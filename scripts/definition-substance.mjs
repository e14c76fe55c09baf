// What a `definition` package may export (docs/architecture.md, "Layers"): types, interfaces, abstract
// classes, Error classes, constants and data, and small synchronous helpers (validators, error mappers).
// Anything else is an implementation and belongs in a service, a provider or a library. Read with the
// TypeScript compiler API so the verdict rests on the code, not on the package's label.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import ts from 'typescript'

/**
 * Statements (nested ones included) an exported helper or a concrete method of an exported abstract class
 * may have. Twelve fits a validator or an error mapper; a read loop, a parser or a protocol does not.
 */
export const MAX_HELPER_STATEMENTS = 12

const hasModifier = (node, kind) =>
  (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : []).some((m) => m.kind === kind)

function countStatements(node) {
  let count = 0
  const visit = (child) => {
    if (ts.isStatement(child) && !ts.isBlock(child)) count++
    ts.forEachChild(child, visit)
  }
  ts.forEachChild(node, visit)
  return count
}

/**
 * Why a function-like body is an implementation, or undefined when it is a small helper. A free function
 * that is async or a generator does I/O or drives a protocol itself; a method of an abstract service may be
 * async when it only composes the abstract members (a template method), so only its size counts.
 */
function implementationReason(fn, { method = false } = {}) {
  if (!method && hasModifier(fn, ts.SyntaxKind.AsyncKeyword)) return 'is async (a definition performs no I/O)'
  if (!method && fn.asteriskToken) return 'is a generator'
  if (!fn.body) return undefined
  const statements = ts.isBlock(fn.body) ? countStatements(fn.body) : 1 + countStatements(fn.body)
  if (statements > MAX_HELPER_STATEMENTS)
    return `has ${statements} statements (a definition's helper has at most ${MAX_HELPER_STATEMENTS})`
  return undefined
}

const isErrorSubclass = (cls) =>
  (cls.heritageClauses ?? []).some(
    (clause) =>
      clause.token === ts.SyntaxKind.ExtendsKeyword &&
      clause.types.some((type) => /(^|\.)\w*Error$/.test(type.expression.getText())),
  )

/** Local names a file exports through `export { a as b }` and `export default a`. */
function exportedByList(source) {
  const names = new Set()
  for (const statement of source.statements) {
    if (
      ts.isExportDeclaration(statement) &&
      !statement.moduleSpecifier &&
      statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const element of statement.exportClause.elements)
        if (!element.isTypeOnly) names.add((element.propertyName ?? element.name).text)
    }
    if (ts.isExportAssignment(statement) && ts.isIdentifier(statement.expression)) names.add(statement.expression.text)
  }
  return names
}

/** Problems of one definition source file: `file:line: symbol …` lines, relative to `root`. */
export function definitionFileProblems(file, root) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const listed = exportedByList(source)
  const problems = []
  const where = (node) =>
    `${relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`
  const isExported = (node, name) =>
    hasModifier(node, ts.SyntaxKind.ExportKeyword) || (name !== undefined && listed.has(name))

  const checkFunction = (fn, symbol) => {
    const reason = implementationReason(fn)
    if (reason)
      problems.push(
        `${where(fn)}: exported function ${symbol} ${reason}; a definition exports types and small pure helpers only — move it to a service, a provider or a library`,
      )
  }
  const checkClass = (cls, symbol) => {
    if (isErrorSubclass(cls)) return
    if (!hasModifier(cls, ts.SyntaxKind.AbstractKeyword)) {
      problems.push(
        `${where(cls)}: exported class ${symbol} is an implementation (neither abstract nor an Error subclass); a definition exports the abstract service only — move it to a service, a provider or a library`,
      )
      return
    }
    for (const member of cls.members) {
      if (!(ts.isMethodDeclaration(member) || ts.isGetAccessor(member) || ts.isSetAccessor(member)) || !member.body)
        continue
      const reason = implementationReason(member, { method: true })
      if (reason)
        problems.push(
          `${where(member)}: method ${symbol}.${member.name.getText(source)} ${reason}; an abstract service in a definition declares, it does not implement`,
        )
    }
  }

  // An exported object of functions is a module of helpers by another name: each one is held to the same rule.
  const checkObject = (object, symbol) => {
    for (const property of object.properties) {
      const key = property.name ? property.name.getText(source) : '…'
      if (ts.isMethodDeclaration(property) || ts.isGetAccessor(property) || ts.isSetAccessor(property))
        checkFunction(property, `${symbol}.${key}`)
      else if (ts.isPropertyAssignment(property)) {
        const value = property.initializer
        if (ts.isArrowFunction(value) || ts.isFunctionExpression(value)) checkFunction(value, `${symbol}.${key}`)
        else if (ts.isClassExpression(value)) checkClass(value, `${symbol}.${key}`)
        else if (ts.isObjectLiteralExpression(value)) checkObject(value, `${symbol}.${key}`)
      }
    }
  }

  for (const statement of source.statements) {
    if (ts.isClassDeclaration(statement)) {
      const name = statement.name?.text
      if (isExported(statement, name)) checkClass(statement, name ?? 'default')
    } else if (ts.isFunctionDeclaration(statement)) {
      const name = statement.name?.text
      if (isExported(statement, name)) checkFunction(statement, name ?? 'default')
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name) || !isExported(statement, declaration.name.text)) continue
        const init = declaration.initializer
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          checkFunction(init, declaration.name.text)
        else if (init && ts.isClassExpression(init)) checkClass(init, declaration.name.text)
        else if (init && ts.isObjectLiteralExpression(init)) checkObject(init, declaration.name.text)
      }
    } else if (ts.isExportAssignment(statement)) {
      const value = statement.expression
      if (ts.isArrowFunction(value) || ts.isFunctionExpression(value)) checkFunction(value, 'default')
      else if (ts.isClassExpression(value)) checkClass(value, 'default')
      else if (ts.isObjectLiteralExpression(value)) checkObject(value, 'default')
    }
  }
  return problems
}
