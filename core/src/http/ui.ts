/**
 * The web UI's static files (the `ui` workspace's build) at /ui/, with `/`
 * redirecting there, served by express beside the API's fast path (an API
 * request never comes here, see listener.ts).
 *
 * What must stay true:
 * - Every UI response carries a strict Content-Security-Policy (no inline
 *   script or style, nothing from another origin, no framing) and
 *   X-Frame-Options DENY. API responses do not: their headers (CORS
 *   included) are the API's own.
 * - Only files of the build directory are served; a path the SPA routes
 *   itself (/ui/secrets/...) gets index.html, never a directory listing.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import express from 'express';
import type { Response } from 'express';

const UI_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** The built UI (the `ui` workspace's dist/), or null when it is not built or not installed. */
export function builtUiDirectory(): string | null {
  let pkg: string;
  try {
    pkg = require.resolve('@strongroom/ui/package.json');
  } catch {
    return null;
  }
  const dir = join(dirname(pkg), 'dist');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

function uiHeaders(res: Response): void {
  for (const [k, v] of Object.entries(UI_HEADERS)) res.setHeader(k, v);
}

/** Routes for `/`, `/favicon.ico` and `/ui/...`, serving the files of `dir`. */
export function uiRouter(dir: string): express.Router {
  const router = express.Router({ strict: true });
  const index = join(dir, 'index.html');
  const files = express.static(dir, {
    index: false,
    redirect: false,
    etag: false,
    dotfiles: 'ignore',
    setHeaders: (res, path) => {
      // Vite names built assets by their content hash: they never change under one name.
      res.setHeader('Cache-Control', path.startsWith(join(dir, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  router.get('/', (_req, res) => {
    uiHeaders(res);
    res.redirect(302, '/ui/');
  });
  router.get('/ui', (_req, res) => {
    uiHeaders(res);
    res.redirect(301, '/ui/');
  });
  router.get('/favicon.ico', (_req, res) => {
    uiHeaders(res);
    res.sendFile(join(dir, 'favicon.svg'), { headers: { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=86400' } });
  });
  router.use('/ui', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    uiHeaders(res);
    files(req, res, () => {
      // A missing built asset is a 404; any other path is one of the SPA's own routes.
      if (req.path.startsWith('/assets/')) return next();
      res.sendFile(index, { headers: { 'Cache-Control': 'no-cache' } });
    });
  });
  return router;
}
