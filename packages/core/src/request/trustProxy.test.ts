import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { forwardedTrust } from './trustProxy.js';

/** The client each setting finds behind peer 127.0.0.1 with `X-Forwarded-For: 1.1.1.1, 192.168.1.5, 10.0.0.7`. */
const client = (setting: Parameters<typeof forwardedTrust>[0]) =>
  forwardedTrust(setting).clientAddress('127.0.0.1', '1.1.1.1, 192.168.1.5, 10.0.0.7');

describe("forwardedTrust: the forms of Express's trust proxy", () => {
  it('reads booleans and hop counts', () => {
    expect(client(false)).toBe('127.0.0.1');
    expect(client(true)).toBe('1.1.1.1');
    expect(client(1)).toBe('10.0.0.7');
    expect(client(2)).toBe('192.168.1.5');
    expect(client(9)).toBe('1.1.1.1');
  });

  it('reads an address, a comma list, a list, named ranges and a function alike', () => {
    expect(client('127.0.0.1')).toBe('10.0.0.7');
    expect(client('127.0.0.1, 10.0.0.0/8')).toBe('192.168.1.5');
    expect(client(['127.0.0.1', '10.0.0.0/8'])).toBe('192.168.1.5');
    expect(client('loopback, uniquelocal')).toBe('1.1.1.1');
    expect(client((address, hop) => hop < 2 && address !== '1.1.1.1')).toBe('192.168.1.5');
    expect(forwardedTrust('loopback').trust).toBe('bounded');
    expect(forwardedTrust('').trust).toBe('none');
  });

  it('refuses what Express would not read, naming the option', () => {
    expect(() => forwardedTrust('127.0.0.1, proxy.local')).toThrow(ConfigError);
    expect(() => forwardedTrust(-1)).toThrow(/hop count/);
    expect(() => forwardedTrust({} as never)).toThrow(/option "trustProxy"/);
  });
});
