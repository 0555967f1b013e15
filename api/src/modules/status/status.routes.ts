import { Role } from '@turnpike/core/domain/users';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { createSetupService } from '../setup/setup.service.ts';

/** The public status object the console caches: branding, switches and sign-in providers. Never a secret. */
export function registerStatusRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { options, version, startTime } = ctx.deps;
  const setup = createSetupService(ctx.deps);

  app.get('/status', async () => {
    const o = options;
    const chats = o.get('Chats');
    // The first two chats the console's Chats option lists; there is no separate chat-link option.
    const chatLinks = chats.flatMap((entry: Record<string, string>) => Object.values(entry));
    return ok({
      version,
      start_time: startTime,
      setup: await setup.isSetUp(),
      system_name: o.get('SystemName'),
      logo: o.get('Logo'),
      footer_html: o.get('Footer'),
      server_address: o.get('ServerAddress'),
      price: o.get('Price'),
      min_topup: o.get('MinTopUp'),
      top_up_link: o.get('TopUpLink'),
      docs_link: o.get('general_setting.docs_link'),
      quota_per_unit: o.get('QuotaPerUnit'),
      display_in_currency: o.get('DisplayInCurrencyEnabled'),
      display_token_stat: o.get('DisplayTokenStatEnabled'),
      // Not a switch here: the relay always writes usage (debits, logs, used_quota) through its batching writer
      // (relay/src/books/settle.ts, docs/adr/0016), so batch updating is always on.
      enable_batch_update: true,
      enable_drawing: o.get('DrawingEnabled'),
      enable_task: o.get('TaskEnabled'),
      enable_data_export: o.get('DataExportEnabled'),
      data_export_default_time: o.get('DataExportDefaultTime'),
      default_collapse_sidebar: o.get('DefaultCollapseSidebar'),
      enable_online_topup: Boolean(o.get('PayAddress') && o.get('EpayId') && o.getText('EpayKey')),
      mj_notify_enabled: o.get('MjNotifyEnabled'),
      chats,
      chat_link: chatLinks[0] ?? '',
      chat_link2: chatLinks[1] ?? '',
      /** The release feed of Settings → Other's update check (UPDATE_CHECK_URL); '' hides the check. */
      update_check_url: ctx.deps.config.updateCheckUrl ?? '',
      demo_site_enabled: o.get('DemoSiteEnabled'),
      self_use_mode_enabled: o.get('SelfUseModeEnabled'),
      email_verification: o.get('EmailVerificationEnabled'),
      register_enabled: o.get('RegisterEnabled'),
      password_login_enabled: o.get('PasswordLoginEnabled'),
      password_register_enabled: o.get('PasswordRegisterEnabled'),
      turnstile_check: o.get('TurnstileCheckEnabled'),
      turnstile_site_key: o.getText('TurnstileSiteKey'),
      github_oauth: o.get('GitHubOAuthEnabled'),
      github_client_id: o.get('GitHubClientId'),
      linuxdo_oauth: o.get('LinuxDOOAuthEnabled'),
      linuxdo_client_id: o.get('LinuxDOClientId'),
      telegram_oauth: o.get('TelegramOAuthEnabled'),
      telegram_bot_name: o.get('TelegramBotName'),
      wechat_login: o.get('WeChatAuthEnabled'),
      wechat_qrcode: o.get('WeChatAccountQRCodeImageURL'),
      oidc_enabled: o.get('oidc.enabled'),
      oidc_client_id: o.get('oidc.client_id'),
      oidc_authorization_endpoint: o.get('oidc.authorization_endpoint'),
    });
  });

  // Whether this server can reach its database (the reference's TestStatus): administrators and monitors.
  app.get('/status/test', { preHandler: ctx.auth.requireRole(Role.Admin) }, async (_request, reply) => {
    try {
      await ctx.deps.db.execute(sql`select 1`);
      return ok(null, 'the database answers');
    } catch {
      return reply.code(503).send({ success: false, message: 'the database does not answer', data: null });
    }
  });

  app.get('/notice', async () => ok(options.get('Notice')));
  app.get('/about', async () => ok(options.get('About')));
  app.get('/home_page_content', async () => ok(options.get('HomePageContent')));
}
