import { corsConfigOf, createCors, STD_ALLOWED_HEADERS } from './cors';

describe('cors', () => {
  it('adds the caller\'s headers after the standard ones, each once whatever its case', () => {
    const c = corsConfigOf(['https://a.example', 'https://a.example'], ['x-custom', 'content-type', 'X-Custom']);
    expect(c.allowed_origins).toEqual(['https://a.example']);
    expect(c.allowed_headers).toEqual([...STD_ALLOWED_HEADERS, 'x-custom']);
  });

  it('passes requests without Origin or while off; refuses, preflights or marks the others', () => {
    const cors = createCors();
    expect(cors.verdict('GET', 'https://a.example')).toBeNull();
    cors.set(corsConfigOf(['https://a.example'], []));
    expect(cors.verdict('GET', undefined)).toBeNull();
    expect(cors.verdict('GET', '')).toBeNull();
    expect(cors.verdict('GET', 'https://b.example')).toEqual({ answer: { status: 403, body: { errors: ['origin not allowed'] } } });
    // An origin is matched whole: a prefix or a different scheme is another origin.
    expect(cors.verdict('GET', 'https://a.example.evil')).toHaveProperty('answer.status', 403);
    expect(cors.verdict('GET', 'http://a.example')).toHaveProperty('answer.status', 403);
    expect(cors.verdict('GET', 'https://a.example')).toEqual({ headers: { 'Access-Control-Allow-Origin': 'https://a.example', Vary: 'Origin' } });
    expect(cors.verdict('OPTIONS', 'https://a.example')).toHaveProperty('answer.status', 204);
    cors.set(corsConfigOf(['*'], []));
    expect(cors.verdict('GET', 'https://anything.example')).toHaveProperty('headers');
  });

  it('hands out copies of its configuration', () => {
    const cors = createCors();
    cors.set(corsConfigOf(['https://a.example'], []));
    cors.config().allowed_origins.push('https://evil.example');
    expect(cors.verdict('GET', 'https://evil.example')).toHaveProperty('answer.status', 403);
  });
});
