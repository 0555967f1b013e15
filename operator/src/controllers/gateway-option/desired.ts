/**
 * GatewayOption resource -> the whole options it owns. Each value is checked on its own by the option registry
 * here (unknown key, wrong type); the cross-option rules run at write time against the stored values, in the
 * same transaction, exactly as `PUT /api/option/`. Pure.
 */
import { isPriceOptionKey, type ManagedOptionValue } from '@turnpike/core/options/managed-options';
import {
  isOptionKey,
  isSecretOptionKey,
  readOptionText,
  unknownOptionMessage,
} from '@turnpike/core/options/registry';
import type { GatewayOptionResource } from '../../api/v1alpha1.ts';
import { type Refusal, refuse } from '../outcome.ts';

export type DesiredOptions = { readonly ok: true; readonly values: ManagedOptionValue[] } | Refusal;

export function desiredOptions(resource: GatewayOptionResource): DesiredOptions {
  const values: ManagedOptionValue[] = [];
  for (const [key, text] of Object.entries(resource.spec.values ?? {}).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    if (!isOptionKey(key)) return refuse('Valid', 'UnknownOption', unknownOptionMessage(key));
    // A custom resource is readable by whoever may read it, so secrets (tokens, client secrets, keys) stay in
    // the console, which never shows them back.
    if (isSecretOptionKey(key))
      return refuse(
        'Valid',
        'SecretOption',
        `${key} is a secret; set it in the console, not in a GatewayOption`,
      );
    if (isPriceOptionKey(key))
      return refuse('Valid', 'InvalidOption', `${key} is set with ModelPrice resources, not GatewayOption`);
    const checked = readOptionText(key, text);
    if (!checked.ok) return refuse('Valid', 'InvalidOption', checked.message);
    values.push({ key, entry: '', text: checked.value });
  }
  if (values.length === 0) return refuse('Valid', 'InvalidSpec', 'spec.values lists no option');
  return { ok: true, values };
}
