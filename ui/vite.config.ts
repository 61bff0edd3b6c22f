/**
 * The UI's build: static files in dist/, served by the core at /ui/. Nothing
 * is inlined into index.html (the server's Content-Security-Policy allows no
 * inline script or style), and nothing is fetched from outside at run time.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Inlined assets would be data: URLs in CSS; keep every asset a file of its own.
    assetsInlineLimit: 0,
    target: 'es2022',
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
