// Builds the browser app into dist/, which the `web-app` row serves through ctx.webserver.
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

export default defineConfig({
  plugins: [react()],
  // The wire contract (`@dsh/web-protocol`) is read from its TypeScript source, like every workspace package.
  resolve: { conditions: ['@dsh/source', 'module', 'browser', 'development|production'] },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
})
