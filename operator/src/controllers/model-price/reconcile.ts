/** ModelPrice: price map entries owned by the resource, written with the other owned options in batches. */
import { KINDS, type ModelPriceResource } from '../../api/v1alpha1.ts';
import type { KindHandlers } from '../controller.ts';
import { type OptionHandlerDeps, ownedOptionHandlers } from '../owned-options.ts';
import { desiredPrices } from './desired.ts';

export function modelPriceHandlers(deps: OptionHandlerDeps): KindHandlers<ModelPriceResource> {
  return ownedOptionHandlers<ModelPriceResource>(KINDS.ModelPrice, deps, desiredPrices, (values) => ({
    optionEntries: values.map((v) => `${v.key}[${v.entry}]`),
  }));
}
