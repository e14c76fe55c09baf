// Resolves test-support plugin names (llm-scripted, llm-replay, fixtures) for compositions booted by tests.
export default (name) => import(name)
