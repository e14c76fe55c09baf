// Resolves plugin names from this bundle's own dependencies (app-boot calls it; see docs/architecture.md).
export default (name) => import(name)
