/**
 * The third-party accounts a user can sign in with (reference §9.7), each reduced to one question: given what
 * the browser brought back, which account of the provider is this? The answer is an {@link Identity}; what to do
 * with it (sign in, register, bind) is the service's business.
 *
 * - GitHub, OIDC and LinuxDO: an authorization code, exchanged for an access token, which reads the profile.
 * - WeChat: a code the user got from the site's WeChat official account, checked by the external WeChat server.
 * - Telegram: the login widget's fields, signed by the bot token (checked here, no call).
 *
 * A provider that fails or answers nonsense gives UPSTREAM_FAILED; a code it refuses gives VALIDATION_FAILED.
 * What the user sees never contains a secret or a token.
 */

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { asRecord, callUpstreamJson, type UpstreamCall } from '@turnpike/core/channels/upstream';
import type { ResolvedConfig } from '@turnpike/core/config';
import { AppError } from '@turnpike/core/errors';
import type { Json } from '@turnpike/core/json';
import type { OptionStore } from '@turnpike/core/options/store';

/** The user column holding each provider's account id. */
export type IdentityColumn = 'githubId' | 'oidcId' | 'linuxDoId' | 'wechatId' | 'telegramId';

export interface Identity {
  readonly column: IdentityColumn;
  /** The provider's name for messages ("GitHub"). */
  readonly provider: string;
  /** Prefix of the usernames made for new users (`github_17`). */
  readonly prefix: string;
  /** The account id kept in the user row (GitHub's login, LinuxDO's numeric id, OIDC's subject, ...). */
  readonly id: string;
  /** A username the provider suggests (OIDC's preferred_username), taken when it is free and valid. */
  readonly username?: string;
  readonly displayName?: string;
  readonly email?: string;
}

/** The providers whose sign-in is a redirect with an authorization code. */
export type CodeProvider = 'github' | 'oidc' | 'linuxdo';
export const CODE_PROVIDERS: readonly CodeProvider[] = ['github', 'oidc', 'linuxdo'];

/** A provider's JSON answer; a token endpoint's refusal (`token`) is an answer too, carrying the reason. */
const callProvider = async (name: string, url: string, call: UpstreamCall, kind: 'token' | 'profile') =>
  asRecord(await callUpstreamJson(url, call, { name, refusalIsAnswer: kind === 'token' }));

/** The access token of a token endpoint's answer, or a clear refusal (a wrong or used code). */
function accessTokenOf(provider: string, answer: Json): string {
  if (typeof answer.access_token === 'string' && answer.access_token !== '') return answer.access_token;
  const reason =
    typeof answer.error_description === 'string'
      ? answer.error_description
      : typeof answer.error === 'string'
        ? answer.error
        : 'no access token';
  throw new AppError('VALIDATION_FAILED', `${provider} refused the sign-in code (${reason}); sign in again`);
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

const enabledOrRefuse = (on: boolean, provider: string) => {
  if (!on) throw new AppError('FEATURE_DISABLED', `sign-in with ${provider} is not enabled on this site`);
};

export function createIdentityProviders(config: ResolvedConfig, options: OptionStore) {
  const urls = config.oauthUrls;

  async function github(code: string): Promise<Identity> {
    enabledOrRefuse(options.get('GitHubOAuthEnabled'), 'GitHub');
    const token = accessTokenOf(
      'GitHub',
      await callProvider(
        'GitHub',
        `${urls.github}/login/oauth/access_token`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            client_id: options.get('GitHubClientId'),
            client_secret: options.get('GitHubClientSecret'),
            code,
          }),
        },
        'token',
      ),
    );
    const profile = await callProvider(
      'GitHub',
      `${urls.githubApi}/user`,
      {
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/vnd.github+json',
          'user-agent': 'turnpike',
        },
      },
      'profile',
    );
    const login = text(profile.login);
    if (!login) throw new AppError('UPSTREAM_FAILED', 'GitHub sent a profile without a login name');
    return {
      column: 'githubId',
      provider: 'GitHub',
      prefix: 'github',
      id: login,
      displayName: text(profile.name) ?? login,
      email: text(profile.email),
    };
  }

  async function oidc(code: string, callbackUrl: string): Promise<Identity> {
    enabledOrRefuse(options.get('oidc.enabled'), 'OIDC');
    const tokenEndpoint = options.get('oidc.token_endpoint');
    const userInfoEndpoint = options.get('oidc.user_info_endpoint');
    if (!tokenEndpoint || !userInfoEndpoint) {
      throw new AppError(
        'FEATURE_DISABLED',
        'OIDC sign-in is missing its token or user-info endpoint setting',
      );
    }
    const token = accessTokenOf(
      'OIDC',
      await callProvider(
        'OIDC',
        tokenEndpoint,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({
            client_id: options.get('oidc.client_id'),
            client_secret: options.get('oidc.client_secret'),
            code,
            grant_type: 'authorization_code',
            redirect_uri: callbackUrl,
          }),
        },
        'token',
      ),
    );
    const profile = await callProvider(
      'OIDC',
      userInfoEndpoint,
      { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
      'profile',
    );
    const subject = text(profile.sub);
    const email = text(profile.email);
    if (!subject || !email) {
      throw new AppError('UPSTREAM_FAILED', 'the OIDC provider sent user info without a subject or an email');
    }
    return {
      column: 'oidcId',
      provider: 'OIDC',
      prefix: 'oidc',
      id: subject,
      username: text(profile.preferred_username),
      displayName: text(profile.name) ?? text(profile.preferred_username),
      email,
    };
  }

  async function linuxdo(code: string, callbackUrl: string): Promise<Identity> {
    enabledOrRefuse(options.get('LinuxDOOAuthEnabled'), 'LinuxDO');
    const basic = Buffer.from(
      `${options.get('LinuxDOClientId')}:${options.get('LinuxDOClientSecret')}`,
    ).toString('base64');
    const token = accessTokenOf(
      'LinuxDO',
      await callProvider(
        'LinuxDO',
        `${urls.linuxdo}/oauth2/token`,
        {
          method: 'POST',
          headers: {
            authorization: `Basic ${basic}`,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl }),
        },
        'token',
      ),
    );
    const profile = await callProvider(
      'LinuxDO',
      `${urls.linuxdo}/api/user`,
      { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
      'profile',
    );
    const id = typeof profile.id === 'number' || typeof profile.id === 'string' ? String(profile.id) : '';
    if (id === '') throw new AppError('UPSTREAM_FAILED', 'LinuxDO sent a profile without an id');
    if (profile.active === false || profile.silenced === true) {
      throw new AppError('FORBIDDEN', 'this LinuxDO account is inactive or silenced');
    }
    return {
      column: 'linuxDoId',
      provider: 'LinuxDO',
      prefix: 'linuxdo',
      id,
      displayName: text(profile.name) ?? text(profile.username),
    };
  }

  /** The WeChat server turns the code the official account gave the user into the user's openid. */
  async function wechat(code: string): Promise<Identity> {
    enabledOrRefuse(options.get('WeChatAuthEnabled'), 'WeChat');
    const server = options.get('WeChatServerAddress').replace(/\/+$/, '');
    const answer = await callProvider(
      'the WeChat server',
      `${server}/api/wechat/user?code=${encodeURIComponent(code)}`,
      { headers: { authorization: options.get('WeChatServerToken'), accept: 'application/json' } },
      'profile',
    );
    const openId = answer.success === true ? text(answer.data) : undefined;
    if (!openId) {
      const reason = text(answer.message) ?? 'the code is wrong or has expired';
      throw new AppError('VALIDATION_FAILED', `WeChat verification failed: ${reason}`);
    }
    return { column: 'wechatId', provider: 'WeChat', prefix: 'wechat', id: openId };
  }

  return {
    /** The identity behind a code; `callbackUrl` is the console page the provider sent the browser back to. */
    code: { github, oidc, linuxdo } satisfies Record<
      CodeProvider,
      (code: string, callbackUrl: string) => Promise<Identity>
    >,
    wechat,
    telegram: (fields: TelegramFields) => telegram(options, fields),
  };
}

/** The query of a Telegram login widget callback: the widget's fields plus its `hash`. */
export type TelegramFields = Readonly<Record<string, string>>;

/** How old a Telegram widget answer may be (Telegram advises checking `auth_date`; the reference did not). */
const TELEGRAM_MAX_AGE_SECONDS = 24 * 60 * 60;

/** Fields the console adds to the widget's own, which the signature does not cover. */
const UNSIGNED_FIELDS = new Set(['hash', 'lang']);

/**
 * Checks the widget's signature: `hash` is the hex HMAC-SHA256 of the sorted `key=value` lines of the other
 * fields, keyed with the SHA-256 of the bot token. A valid answer more than a day old is refused too.
 */
function telegram(options: OptionStore, fields: TelegramFields): Identity {
  enabledOrRefuse(options.get('TelegramOAuthEnabled'), 'Telegram');
  const hash = fields.hash ?? '';
  const checkString = Object.keys(fields)
    .filter((key) => !UNSIGNED_FIELDS.has(key))
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n');
  const secret = createHash('sha256').update(options.get('TelegramBotToken')).digest();
  const expected = createHmac('sha256', secret).update(checkString).digest();
  const given = /^[0-9a-f]{64}$/i.test(hash) ? Buffer.from(hash, 'hex') : undefined;
  if (!given || !timingSafeEqual(given, expected)) {
    throw new AppError('VALIDATION_FAILED', 'the Telegram sign-in could not be verified; try again');
  }
  const authDate = Number(fields.auth_date);
  if (!Number.isFinite(authDate) || Date.now() / 1000 - authDate > TELEGRAM_MAX_AGE_SECONDS) {
    throw new AppError('VALIDATION_FAILED', 'the Telegram sign-in has expired; sign in with Telegram again');
  }
  const id = text(fields.id);
  if (!id) throw new AppError('VALIDATION_FAILED', 'the Telegram sign-in carries no user id');
  const name = [fields.first_name, fields.last_name].filter(Boolean).join(' ');
  return {
    column: 'telegramId',
    provider: 'Telegram',
    prefix: 'telegram',
    id,
    displayName: text(name) ?? text(fields.username),
  };
}
