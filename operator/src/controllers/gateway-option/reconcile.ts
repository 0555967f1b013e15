/** GatewayOption: whole options owned by the resource, checked by the registry's rules at write time. */
import { type GatewayOptionResource, KINDS } from '../../api/v1alpha1.ts';
import type { KindHandlers } from '../controller.ts';
import { type OptionHandlerDeps, ownedOptionHandlers } from '../owned-options.ts';
import { desiredOptions } from './desired.ts';

export function gatewayOptionHandlers(deps: OptionHandlerDeps): KindHandlers<GatewayOptionResource> {
  return ownedOptionHandlers<GatewayOptionResource>(KINDS.GatewayOption, deps, desiredOptions, (values) => ({
    optionKeys: values.map((v) => v.key),
  }));
}
