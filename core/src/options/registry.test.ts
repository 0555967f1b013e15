import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../billing/default-ratios.ts';
import { Role } from '../domain/users.ts';
import {
  defaultOptionText,
  defaultOptionValue,
  isSecretOptionKey,
  mayManageOption,
  type OptionKey,
  type OptionReader,
  type OptionValue,
  optionAudience,
  optionKeys,
  readDefaults,
  validateOptions,
} from './registry.ts';

/** One option as a person typed it, checked as a change of that option alone. */
function validateOption(key: string, text: string, read?: OptionReader) {
  const result = validateOptions([[key, text]], read);
  return result.ok ? { ok: true as const, value: result.options[0]?.text } : result;
}

/** A reader that answers the defaults except for the values given. */
function readerWith(values: Partial<{ [K in OptionKey]: OptionValue<K> }>): OptionReader {
  return (key) => (key in values ? values[key] : readDefaults(key)) as OptionValue<typeof key>;
}

const expectRejected = (key: string, text: string, message: string | RegExp, read?: OptionReader) => {
  const result = validateOption(key, text, read);
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.message).toMatch(message);
};

const expectStoredAs = (key: string, text: string, stored: string, read?: OptionReader) => {
  expect(validateOption(key, text, read)).toMatchObject({ ok: true, value: stored });
};

// Spec 01 §3, spec 02 §3 and §9, spec 03 (status flags) and the reference's later keys we adopt.
const SPEC_KEYS = [
  ...['PasswordLoginEnabled', 'PasswordRegisterEnabled', 'EmailVerificationEnabled', 'RegisterEnabled'],
  ...['TurnstileCheckEnabled', 'TurnstileSiteKey', 'TurnstileSecretKey'],
  ...['GitHubOAuthEnabled', 'GitHubClientId', 'GitHubClientSecret'],
  ...['WeChatAuthEnabled', 'WeChatServerAddress', 'WeChatServerToken', 'WeChatAccountQRCodeImageURL'],
  ...['TelegramOAuthEnabled', 'TelegramBotToken', 'TelegramBotName'],
  ...['LinuxDOOAuthEnabled', 'LinuxDOClientId', 'LinuxDOClientSecret'],
  ...['oidc.enabled', 'oidc.client_id', 'oidc.client_secret', 'oidc.well_known'],
  ...['oidc.authorization_endpoint', 'oidc.token_endpoint', 'oidc.user_info_endpoint'],
  ...['SMTPServer', 'SMTPPort', 'SMTPAccount', 'SMTPFrom', 'SMTPToken', 'SMTPSSLEnabled'],
  ...['EmailDomainRestrictionEnabled', 'EmailAliasRestrictionEnabled', 'EmailDomainWhitelist'],
  ...['ServerAddress', 'WorkerUrl', 'WorkerValidKey', 'PayAddress', 'EpayId', 'EpayKey', 'Price', 'MinTopUp'],
  ...['TopupGroupRatio', 'CustomCallbackAddress'],
  ...[
    'Notice',
    'SystemName',
    'Logo',
    'Footer',
    'About',
    'HomePageContent',
    'TopUpLink',
    'general_setting.docs_link',
  ],
  ...[
    'QuotaPerUnit',
    'RetryTimes',
    'DisplayInCurrencyEnabled',
    'DisplayTokenStatEnabled',
    'DefaultCollapseSidebar',
  ],
  ...['DemoSiteEnabled', 'SelfUseModeEnabled', 'DrawingEnabled', 'TaskEnabled', 'MjNotifyEnabled'],
  ...['MjAccountFilterEnabled', 'MjForwardUrlEnabled', 'MjModeClearEnabled', 'MjActionCheckSuccessEnabled'],
  ...['CheckSensitiveEnabled', 'CheckSensitiveOnPromptEnabled', 'CheckSensitiveOnCompletionEnabled'],
  ...['StopOnSensitiveEnabled', 'SensitiveWords'],
  ...[
    'LogConsumeEnabled',
    'LogRetentionDays',
    'DataExportEnabled',
    'DataExportInterval',
    'DataExportDefaultTime',
  ],
  ...['ChannelDisableThreshold', 'AutomaticDisableChannelEnabled', 'AutomaticEnableChannelEnabled'],
  ...['AutomaticDisableKeywords', 'ChannelCooldownEnabled', 'ChannelCooldownFailures'],
  ...[
    'ChannelCooldownWindowSeconds',
    'ChannelCooldownMinutes',
    'RetryEmptyResponseEnabled',
    'FirstTokenTimeoutSeconds',
  ],
  ...['QuotaRemindThreshold', 'QuotaForNewUser', 'PreConsumedQuota', 'QuotaForInviter', 'QuotaForInvitee'],
  ...['StreamCacheQueueLength'],
  ...['ModelPrice', 'ModelRatio', 'CompletionRatio', 'CacheRatio', 'GroupRatio', 'UserUsableGroups', 'Chats'],
  ...['ModelRequestRateLimitEnabled', 'ModelRequestRateLimitCount', 'ModelRequestRateLimitSuccessCount'],
  ...['ModelRequestRateLimitDurationMinutes', 'ModelRequestRateLimitGroup'],
  ...['gemini.safety_settings', 'gemini.version_settings', 'gemini.supported_imagine_models'],
  ...['gemini.thinking_adapter_enabled', 'gemini.thinking_adapter_budget_tokens_percentage'],
  ...['claude.model_headers_settings', 'claude.default_max_tokens', 'claude.thinking_adapter_enabled'],
  ...['claude.thinking_adapter_budget_tokens_percentage', 'global.pass_through_request_enabled'],
  ...['general_setting.ping_interval_enabled', 'general_setting.ping_interval_seconds'],
];

describe('option registry', () => {
  it('declares every option the spec and the reference name', () => {
    const missing = SPEC_KEYS.filter((key) => !(optionKeys as readonly string[]).includes(key));
    expect(missing).toEqual([]);
  });

  it.each(optionKeys)('accepts the default of %s as it is stored', (key) => {
    expect(validateOption(key, defaultOptionText(key))).toMatchObject({
      ok: true,
      value: defaultOptionText(key),
    });
  });

  it.each([
    ['SystemName', 'Turnpike'],
    ['general_setting.docs_link', ''],
    ['QuotaPerUnit', '500000'],
    ['RetryTimes', '0'],
    ['Price', '7.3'],
    ['MinTopUp', '1'],
    ['SMTPPort', '587'],
    ['QuotaRemindThreshold', '1000'],
    ['PreConsumedQuota', '500'],
    ['ChannelDisableThreshold', '5'],
    ['DataExportInterval', '5'],
    ['DataExportDefaultTime', 'hour'],
    ['MjForwardUrlEnabled', 'true'],
    ['AutomaticDisableChannelEnabled', 'false'],
    ['ModelRequestRateLimitSuccessCount', '1000'],
    ['ModelRequestRateLimitDurationMinutes', '1'],
    ['GroupRatio', '{"default":1,"vip":1,"svip":1}'],
    ['claude.default_max_tokens', '{"default":8192}'],
    ['claude.thinking_adapter_budget_tokens_percentage', '0.8'],
    ['gemini.thinking_adapter_budget_tokens_percentage', '0.6'],
    ['general_setting.ping_interval_seconds', '60'],
    ['LogRetentionDays', '0'],
    ['ChannelCooldownEnabled', 'false'],
    ['ChannelCooldownFailures', '3'],
    ['ChannelCooldownWindowSeconds', '60'],
    ['ChannelCooldownMinutes', '5'],
    ['FirstTokenTimeoutSeconds', '0'],
  ] as const)('defaults %s to %j', (key, text) => {
    expect(defaultOptionText(key)).toBe(text);
  });

  it('seeds ModelRatio with the built-in model ratios', () => {
    expect(defaultOptionValue('ModelRatio')).toEqual(DEFAULT_MODEL_RATIO);
  });

  it('gives parsed defaults their types and freezes shared JSON values', () => {
    expect(defaultOptionValue('PasswordLoginEnabled')).toBe(true);
    expect(defaultOptionValue('QuotaPerUnit')).toBe(500000);
    expect(defaultOptionValue('SensitiveWords')).toEqual(['test_sensitive']);
    const groups = defaultOptionValue('GroupRatio');
    expect(Object.isFrozen(groups)).toBe(true);
    expect(() => {
      (groups as Record<string, number>).vip = 9;
    }).toThrow(TypeError);
  });
});

describe('secret options', () => {
  it.each([
    'GitHubClientSecret',
    'LinuxDOClientSecret',
    'oidc.client_secret',
    'TurnstileSecretKey',
    'TurnstileSiteKey',
    'WeChatServerToken',
    'TelegramBotToken',
    'SMTPToken',
    'WorkerValidKey',
    'EpayKey',
    'some.future_api_KEY',
  ])('treats %s as secret', (key) => {
    expect(isSecretOptionKey(key)).toBe(true);
  });

  it.each([
    'GitHubClientId',
    'oidc.client_id',
    'claude.default_max_tokens',
    'DisplayTokenStatEnabled',
    'SystemName',
    'EpayId',
  ])('does not treat %s as secret', (key) => {
    expect(isSecretOptionKey(key)).toBe(false);
  });
});

describe('validating one option', () => {
  it('rejects an unknown key and suggests the one that differs only in case', () => {
    expectRejected('NoSuchOption', 'x', 'NoSuchOption is not a known option');
    expectRejected('retrytimes', '1', 'retrytimes is not a known option; did you mean RetryTimes?');
  });

  it.each([
    ['RetryTimes', '11', 'RetryTimes must be an integer from 0 to 10'],
    ['RetryTimes', '-1', 'RetryTimes must be an integer from 0 to 10'],
    ['RetryTimes', '2.5', 'RetryTimes must be an integer from 0 to 10'],
    ['RetryTimes', 'many', 'RetryTimes must be an integer from 0 to 10'],
    ['RetryTimes', '', 'RetryTimes must be an integer from 0 to 10'],
    ['QuotaPerUnit', '0', 'QuotaPerUnit must be a number greater than 0'],
    ['Price', '-0.5', 'Price must be a number of 0 or more'],
    ['Price', '0x10', 'Price must be a number of 0 or more'],
    ['MinTopUp', '0', 'MinTopUp must be an integer of 1 or more'],
    ['DataExportInterval', '0', 'DataExportInterval must be an integer of 1 or more'],
    ['SMTPPort', '70000', 'SMTPPort must be an integer from 1 to 65535'],
    [
      'ModelRequestRateLimitSuccessCount',
      '0',
      'ModelRequestRateLimitSuccessCount must be an integer of 1 or more',
    ],
    [
      'general_setting.ping_interval_seconds',
      '0',
      'general_setting.ping_interval_seconds must be an integer of 1 or more',
    ],
    [
      'claude.thinking_adapter_budget_tokens_percentage',
      '1.5',
      'claude.thinking_adapter_budget_tokens_percentage must be a number from 0.1 to 1',
    ],
    ['DrawingEnabled', 'yes', 'DrawingEnabled must be true or false'],
    ['DataExportDefaultTime', 'month', 'DataExportDefaultTime must be one of hour, day or week'],
    ['SystemName', '   ', 'SystemName must not be empty'],
    ['SMTPFrom', 'not-an-address', 'SMTPFrom must be empty or an email address'],
  ])('rejects %s=%j with "%s"', (key, text, message) => {
    expectRejected(key, text, message);
  });

  it.each([
    ['RetryTimes', ' 3 ', '3'],
    ['Price', '7.30', '7.3'],
    ['QuotaPerUnit', '1e6', '1000000'],
    ['DrawingEnabled', 'FALSE', 'false'],
    ['DataExportDefaultTime', ' week ', 'week'],
    ['SensitiveWords', 'foo\r\n\n  bar  \nfoo\n', 'foo\nbar'],
    ['EmailDomainWhitelist', ' Gmail.com, example.org ,,gmail.com', 'gmail.com,example.org'],
    ['GroupRatio', '{\n  "default": 1,\n  "vip": 1.5\n}', '{"default":1,"vip":1.5}'],
    ['Notice', '  **hello**\n', '  **hello**\n'],
  ])('stores %s=%j as %j', (key, text, stored) => {
    expectStoredAs(key, text, stored);
  });

  it.each([
    'ServerAddress',
    'WorkerUrl',
    'PayAddress',
    'CustomCallbackAddress',
    'WeChatServerAddress',
    'oidc.well_known',
    'oidc.authorization_endpoint',
    'oidc.token_endpoint',
    'oidc.user_info_endpoint',
  ])('stores %s without trailing slashes and only as an http(s) address', (key) => {
    expectStoredAs(key, ' https://gw.example.com/base// ', 'https://gw.example.com/base');
    expectStoredAs(key, 'http://10.0.0.2:3000/', 'http://10.0.0.2:3000');
    expectStoredAs(key, '', '');
    expectRejected(key, 'ftp://gw.example.com', `${key} must be empty or an http:// or https:// address`);
    expectRejected(key, 'gw.example.com', `${key} must be empty or an http:// or https:// address`);
  });

  it('rejects a link that is not http(s) but keeps a valid one as typed', () => {
    expectRejected(
      'TopUpLink',
      'javascript:alert(1)',
      'TopUpLink must be empty or an http:// or https:// link',
    );
    expectStoredAs('general_setting.docs_link', 'https://docs.example.com/', 'https://docs.example.com/');
  });

  it('rejects a domain list with an entry that is not a domain name, naming it', () => {
    expectRejected('EmailDomainWhitelist', 'gmail.com,not a domain', /"not a domain" is not one/);
  });

  it('keeps the ranges root allows one a line in CIDR form and names one that is not a range', () => {
    const key = 'fetch_setting.allowed_ranges';
    expectStoredAs(key, '10.0.0.0/8\n 192.168.1.7 \n\nfd00::1/8\n', '10.0.0.0/8\n192.168.1.7/32\nfd00::/8');
    expectStoredAs(key, '', '');
    expectRejected(
      key,
      '10.0.0.0/8\n10.0.0.0/33',
      `${key} must be IP ranges such as 10.0.0.0/8 or fd00::/8, or single addresses, one a line; "10.0.0.0/33" is not one`,
    );
    expectRejected(key, 'internal.example.com', /"internal\.example\.com" is not one/);
    expectRejected(key, '10.0.0.0/8, 172.16.0.0/12', /"10\.0\.0\.0\/8, 172\.16\.0\.0\/12" is not one/);
  });

  it('protects user-chosen addresses by default and lets only root change or read that', () => {
    expect(defaultOptionValue('fetch_setting.enable_ssrf_protection')).toBe(true);
    expect(defaultOptionValue('fetch_setting.allowed_ranges')).toEqual([]);
    for (const key of ['fetch_setting.enable_ssrf_protection', 'fetch_setting.allowed_ranges']) {
      expect(optionAudience(key)).toBe('root');
      expect(mayManageOption(key, Role.Admin)).toBe(false);
      expect(mayManageOption(key, Role.Root)).toBe(true);
    }
  });
});

describe('validating JSON options', () => {
  it.each([
    ['GroupRatio', '{not json', /GroupRatio must be a JSON object .* \(the text is not valid JSON/],
    ['GroupRatio', '{"default":-1}', /GroupRatio must be .* \(at "default": must not be negative\)/],
    ['GroupRatio', '{"vip":1}', /the "default" group is missing/],
    ['GroupRatio', '[1,2]', /GroupRatio must be a JSON object/],
    ['ModelRatio', '{"gpt-4o":"cheap"}', /ModelRatio must be .* \(at "gpt-4o": must be a number\)/],
    ['CompletionRatio', '{"gpt-4o":-4}', /CompletionRatio must be .*must not be negative/],
    ['CacheRatio', 'null', /CacheRatio must be a JSON object/],
    ['ModelPrice', '{"dall-e-3":-0.04}', /ModelPrice must be .*must not be negative/],
    ['TopupGroupRatio', '{"vip":-2}', /TopupGroupRatio must be .*must not be negative/],
    ['UserUsableGroups', '{"vip":2}', /UserUsableGroups must be .* \(at "vip": must be text\)/],
    ['Chats', '{"NextChat":"https://x"}', /Chats must be a JSON list/],
    ['Chats', '[{"A":"https://a","B":"https://b"}]', /at \[0\]: each entry must name exactly one chat/],
    ['Chats', '[{"A":""}]', /a link template must not be empty/],
    ['claude.default_max_tokens', '{"default":0}', /claude.default_max_tokens must be .*must be 1 or more/],
    ['claude.default_max_tokens', '{"default":1.5}', /must be a whole number/],
    [
      'claude.model_headers_settings',
      '{"claude-3":{"anthropic-beta":"x"}}',
      /claude.model_headers_settings must be/,
    ],
    ['gemini.safety_settings', '{"default":false}', /gemini.safety_settings must be .*must be text/],
    ['gemini.supported_imagine_models', '["a",""]', /a name must not be empty/],
    ['ModelRequestRateLimitGroup', '{"vip":[10]}', /ModelRequestRateLimitGroup must be/],
    ['ModelRequestRateLimitGroup', '{"vip":[10,0]}', /at "vip"\[1\]: must be 1 or more/],
    ['ModelRequestRateLimitGroup', '{"vip":[-1,5]}', /at "vip"\[0\]: must be 0 or more/],
    ['RateLimitGroups', '{"vip":{"tpm":-5}}', /RateLimitGroups must be .*at "vip""tpm": must be 0 or more/],
    ['RateLimitGroups', '{"vip":{"concurrency":1.5}}', /must be a whole number/],
    ['RateLimitModels', '{"gpt-4o":{"tokens":5}}', /RateLimitModels must be/],
    ['RateLimitUserDefault', '{"rpm":"ten"}', /RateLimitUserDefault must be .*must be a number/],
  ])('rejects %s=%s with a message that says what is wrong', (key, text, message) => {
    expectRejected(key, text, message);
  });

  it.each([
    ['GroupRatio', '{"default":1,"vip":0}'],
    ['ModelPrice', '{"mj_inpaint":0}'],
    ['Chats', '[{"NextChat":"https://x/#/?key={key}&url={address}"}]'],
    ['ModelRequestRateLimitGroup', '{"vip":[0,50]}'],
    ['RateLimitGroups', '{"vip":{"rpm":60,"tpm":100000,"concurrency":4}}'],
    ['RateLimitModels', '{"gpt-4o":{"concurrency":2}}'],
    ['RateLimitUserDefault', '{"tpm":0}'],
    ['claude.model_headers_settings', '{"claude-3-7-sonnet":{"anthropic-beta":["output-128k-2025-02-19"]}}'],
  ])('accepts %s=%s', (key, text) => {
    expectStoredAs(key, text, text);
  });
});

describe('rules between options', () => {
  it.each([
    ['GitHubOAuthEnabled', 'GitHubClientId'],
    ['LinuxDOOAuthEnabled', 'LinuxDOClientId'],
    ['WeChatAuthEnabled', 'WeChatServerAddress'],
    ['TelegramOAuthEnabled', 'TelegramBotToken'],
    ['TurnstileCheckEnabled', 'TurnstileSiteKey'],
    ['oidc.enabled', 'oidc.client_id'],
  ] as const)('refuses to turn %s on until %s is set', (flag, required) => {
    expectRejected(flag, 'true', `${flag} cannot be turned on until ${required} is set`);
  });

  it('turns GitHub sign-in on once the client id is set', () => {
    expectStoredAs('GitHubOAuthEnabled', 'true', 'true', readerWith({ GitHubClientId: 'Iv1.abc' }));
  });

  it('accepts a switch and the value it needs when they are saved together', () => {
    const result = validateOptions([
      ['oidc.client_id', 'turnpike'],
      ['oidc.enabled', 'true'],
    ]);
    expect(result.ok).toBe(true);
  });

  it('refuses to clear a value a switched-on option needs', () => {
    const read = readerWith({ GitHubOAuthEnabled: true, GitHubClientId: 'Iv1.abc' });
    expectRejected(
      'GitHubClientId',
      ' ',
      'GitHubClientId cannot be emptied while GitHubOAuthEnabled is on; turn GitHubOAuthEnabled off first',
      read,
    );
  });

  it('needs both Turnstile keys, since a check it cannot verify would lock everyone out', () => {
    const read = readerWith({ TurnstileSiteKey: '0x4AAA' });
    expectRejected(
      'TurnstileCheckEnabled',
      'true',
      'TurnstileCheckEnabled cannot be turned on until TurnstileSecretKey is set',
      read,
    );
    expectStoredAs(
      'TurnstileCheckEnabled',
      'true',
      'true',
      readerWith({ TurnstileSiteKey: 'a', TurnstileSecretKey: 'b' }),
    );
  });

  it('refuses an email domain restriction with an empty whitelist', () => {
    const read = readerWith({ EmailDomainRestrictionEnabled: true });
    expectRejected(
      'EmailDomainWhitelist',
      ' , ',
      /EmailDomainWhitelist cannot be emptied while EmailDomainRestrictionEnabled is on/,
      read,
    );
    expectStoredAs('EmailDomainRestrictionEnabled', 'true', 'true');
  });

  it('does not hold an unrelated change hostage to a rule the stored values already break', () => {
    const read = readerWith({ GitHubOAuthEnabled: true, GitHubClientId: '' });
    expectStoredAs('RetryTimes', '2', '2', read);
  });

  it('reports the first bad value of a batch and nothing is accepted', () => {
    const result = validateOptions([
      ['RetryTimes', '3'],
      ['QuotaPerUnit', '0'],
    ]);
    expect(result).toEqual({ ok: false, message: 'QuotaPerUnit must be a number greater than 0' });
  });

  it('takes the last value of a key given twice in a batch', () => {
    const result = validateOptions([
      ['RetryTimes', '3'],
      ['RetryTimes', '4'],
    ]);
    expect(result.ok && result.options.map((o) => [o.key, o.text])).toEqual([['RetryTimes', '4']]);
  });
});
