import { describe, expect, it } from 'vitest';
import {
  chat2Link,
  chatIndex,
  fillChatLink,
  isScriptLink,
  isWebLink,
  parseChatLinks,
  serverAddress,
} from './links.ts';

describe('chat links', () => {
  it('reads the Chats list from the status or from its stored JSON text', () => {
    const list = [{ NextChat: 'https://n/#/?k={key}' }, { OpenCat: 'opencat://team/join?token={key}' }];
    const expected = {
      kind: 'ok',
      links: [
        { name: 'NextChat', template: 'https://n/#/?k={key}' },
        { name: 'OpenCat', template: 'opencat://team/join?token={key}' },
      ],
    };
    expect(parseChatLinks(list)).toEqual(expected);
    expect(parseChatLinks(JSON.stringify(list))).toEqual(expected);
    expect(parseChatLinks(null)).toEqual({ kind: 'ok', links: [] });
    expect(parseChatLinks('[]')).toEqual({ kind: 'ok', links: [] });
  });

  it('calls anything else a configuration error', () => {
    for (const bad of ['{not json', '{"a":"b"}', '[1]', '[{}]', '[{"a":3}]', { a: 'b' }])
      expect(parseChatLinks(bad)).toEqual({ kind: 'invalid' });
  });

  it('reads the chat index of /chat/{id}, the first when left out', () => {
    expect(chatIndex(undefined)).toBe(0);
    expect(chatIndex('')).toBe(0);
    expect(chatIndex('2')).toBe(2);
    expect(chatIndex('2/')).toBe(2);
    expect(chatIndex('abc')).toBeNull();
    expect(chatIndex('-1')).toBeNull();
  });

  it('fills every {key} with sk- and the key, and every {address} with the encoded address', () => {
    const template = 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}&again={key}';
    expect(fillChatLink(template, 'sk-abc', 'https://gw.example.com')).toBe(
      'https://app.nextchat.dev/#/?settings={"key":"sk-abc","url":"https%3A%2F%2Fgw.example.com"}&again=sk-abc',
    );
    // a bare key gets its prefix
    expect(fillChatLink('x?k={key}', 'abc', '')).toBe('x?k=sk-abc');
  });

  it('uses the server address setting, else the page origin, without a trailing slash', () => {
    expect(serverAddress('https://gw.example.com/', 'http://localhost:3000')).toBe('https://gw.example.com');
    expect(serverAddress('  ', 'http://localhost:3000')).toBe('http://localhost:3000');
    expect(serverAddress(undefined, 'http://localhost:3000')).toBe('http://localhost:3000');
  });

  it('builds the /chat2link target from a template or from a bare front-end address', () => {
    expect(chat2Link('https://lobe/?k={key}&u={address}', 'sk-k', 'https://gw')).toBe(
      'https://lobe/?k=sk-k&u=https%3A%2F%2Fgw',
    );
    expect(chat2Link('https://chat.example.com/', 'sk-k', 'https://gw')).toBe(
      'https://chat.example.com/#/?settings={"key":"sk-k","url":"https%3A%2F%2Fgw"}',
    );
  });

  it('tells web links from app links', () => {
    expect(isWebLink('https://x')).toBe(true);
    expect(isWebLink('HTTP://x')).toBe(true);
    expect(isWebLink('opencat://team/join')).toBe(false);
    expect(isWebLink('javascript:alert(1)')).toBe(false);
    expect(isScriptLink(' JavaScript:alert(1)')).toBe(true);
    expect(isScriptLink('opencat://team/join')).toBe(false);
  });
});
