// The one door to the Cordis framework (see vendor/README.md). Upstream rc.10 has no default export.
export * from 'cordis'
