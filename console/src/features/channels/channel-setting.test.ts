import { describe, expect, it } from 'vitest';
import { isProxyUrlAllowed, readSettingFields, writeSettingField } from './channel-setting.ts';
import { checkChannelForm } from './validation.ts';

describe('channel setting fields', () => {
  it('reads proxy, force_format and thinking_to_content from the setting JSON, with defaults when absent', () => {
    expect(readSettingFields('')).toEqual({ proxy: '', force_format: false, thinking_to_content: false });
    expect(
      readSettingFields(
        '{"proxy": "socks5://10.0.0.1:1080", "force_format": true, "thinking_to_content": true}',
      ),
    ).toEqual({ proxy: 'socks5://10.0.0.1:1080', force_format: true, thinking_to_content: true });
    // the relay turns a flag on only for a JSON true
    expect(readSettingFields('{"force_format": "yes"}')?.force_format).toBe(false);
    expect(readSettingFields('{"proxy": ')).toBeNull();
    expect(readSettingFields('[1]')).toBeNull();
  });

  it('writes one key, keeping the keys it has no field for, and drops a key turned off or emptied', () => {
    const start = '{"headers": {"X-Team": "a"}}';
    const withProxy = writeSettingField(start, 'proxy', 'http://proxy.internal:3128');
    expect(JSON.parse(withProxy)).toEqual({
      headers: { 'X-Team': 'a' },
      proxy: 'http://proxy.internal:3128',
    });
    const withFlag = writeSettingField(withProxy, 'force_format', true);
    expect(JSON.parse(withFlag)).toMatchObject({ force_format: true, headers: { 'X-Team': 'a' } });
    expect(JSON.parse(writeSettingField(withFlag, 'force_format', false))).toEqual(JSON.parse(withProxy));
    expect(JSON.parse(writeSettingField(withProxy, 'proxy', ''))).toEqual({ headers: { 'X-Team': 'a' } });
    // nothing left: no setting at all
    expect(writeSettingField('{"thinking_to_content": true}', 'thinking_to_content', false)).toBe('');
    expect(writeSettingField('', 'thinking_to_content', true)).toBe('{\n  "thinking_to_content": true\n}');
    // text that is not a JSON object is never overwritten
    expect(writeSettingField('{"proxy": ', 'force_format', true)).toBe('{"proxy": ');
  });

  it('accepts a blank proxy or an http, https or socks5 URL, and the form refuses any other', () => {
    for (const ok of ['', 'http://p:3128', 'https://p.example', 'socks5://u:pw@127.0.0.1:1080'])
      expect(isProxyUrlAllowed(ok), ok).toBe(true);
    for (const bad of ['ftp://p.example', 'socks4://p:1080', 'proxy.example:3128', 'http//p'])
      expect(isProxyUrlAllowed(bad), bad).toBe(false);
    const form = {
      name: 'main',
      key: 'sk-1',
      models: ['gpt-4o'],
      model_mapping: '',
      status_code_mapping: '',
      setting: '{"proxy": "ftp://p.example"}',
      param_override: '',
    };
    expect(checkChannelForm(form, false)).toBe('error.proxy');
    expect(checkChannelForm({ ...form, setting: '{"proxy": "socks5://p:1080"}' }, false)).toBeNull();
  });
});
