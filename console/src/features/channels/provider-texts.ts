import type { ProviderType } from '@turnpike/core/providers/catalogue';

/**
 * The console's texts for the provider-type catalogue. The catalogue (core) is English and shared with the API,
 * so the console never shows its `keyFormat` or extra-field `label` directly: it shows the `providers` namespace
 * entry built from the type id instead, which exists in zh and en for every catalogue type.
 */
export const PROVIDERS_NS = 'providers';

type ExtraField = ProviderType['extraFields'][number]['field'];

/** Hint under the key field: what a key of this type looks like. */
export const providerKeyFormatKey = (type: number): string => `provider.${type}.keyFormat`;

/** Placeholder of the key field of a new channel of this type. */
export const providerKeyPlaceholderKey = (type: number): string => `provider.${type}.keyPlaceholder`;

/** Label of an extra field (`other`, `openai_organization`) the catalogue declares for this type. */
export const providerFieldKey = (type: number, field: ExtraField): string =>
  `provider.${type}.field.${field}`;
