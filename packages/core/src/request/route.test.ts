import { describe, expect, it } from 'vitest';
import { normalizePath } from './route.js';

describe('normalizePath', () => {
  it('serves the spellings a router folds onto /search as /search', () => {
    for (const url of [
      '/search',
      '/Search',
      '/search/',
      '//search',
      '/%73earch',
      '/search?q=1',
      '/search#x',
      '///SEARCH//',
    ]) {
      expect(normalizePath(url), url).toBe('/search');
    }
  });

  it('returns a path that is already normal as it is, and normalizes anything near it', () => {
    for (const url of ['/', '/search', '/v1/users/42', '/a-b_c.d~e']) expect(normalizePath(url)).toBe(url);
    expect(normalizePath('/v1/Users')).toBe('/v1/users');
    expect(normalizePath('/v1/users/')).toBe('/v1/users');
    expect(normalizePath('/v1//users')).toBe('/v1/users');
    expect(normalizePath('/v1/users?x=1')).toBe('/v1/users');
  });

  it('keeps case when the router is case-sensitive', () => {
    expect(normalizePath('/Search/', { caseSensitive: true })).toBe('/Search');
  });

  it('collapses inner repeated slashes and keeps the root', () => {
    expect(normalizePath('/a//b///c')).toBe('/a/b/c');
    expect(normalizePath('/')).toBe('/');
    expect(normalizePath('//')).toBe('/');
  });

  it('keeps an encoded slash encoded: it does not split a segment', () => {
    expect(normalizePath('/files/a%2fb')).toBe('/files/a%2fb');
    expect(normalizePath('/files/a%2Fb', { caseSensitive: true })).toBe('/files/a%2Fb');
  });

  it('decodes once, and survives malformed escapes', () => {
    expect(normalizePath('/%2573earch')).toBe('/%73earch');
    expect(normalizePath('/caf%C3%A9')).toBe('/café');
    expect(normalizePath('/bad%zz/%73')).toBe('/bad%zz/s');
    expect(normalizePath('/cut%E2%82/x', { caseSensitive: true })).toBe('/cut%E2%82/x');
  });

  it('takes the path of an absolute-form target', () => {
    expect(normalizePath('http://example.com/Search/?q=1')).toBe('/search');
  });
});
