/**
 * What a provider charges to fine-tune a model, in USD per million training tokens (tokens in the training file ×
 * epochs, as the job's `trained_tokens` reports them): OpenAI's price page, "Fine-tuning", training column
 * (https://openai.com/api/pricing). A dated model takes its base name's price (`gpt-4o-mini-2024-07-18` →
 * `gpt-4o-mini`); a model with no entry cannot be fine-tuned through the gateway (docs/adr/0050).
 */
export const TRAINING_USD_PER_MILLION: Readonly<Record<string, number>> = {
  'gpt-4.1': 25,
  'gpt-4.1-mini': 5,
  'gpt-4.1-nano': 1.5,
  'gpt-4o': 25,
  'gpt-4o-mini': 3,
  'gpt-3.5-turbo': 8,
};

/** The training price of a model: its own entry, else the longest entry its name starts with. */
export function trainingPriceOf(model: string): number | undefined {
  if (Object.hasOwn(TRAINING_USD_PER_MILLION, model)) return TRAINING_USD_PER_MILLION[model];
  let best: string | undefined;
  for (const name of Object.keys(TRAINING_USD_PER_MILLION))
    if (model.startsWith(`${name}-`) && (best === undefined || name.length > best.length)) best = name;
  return best === undefined ? undefined : TRAINING_USD_PER_MILLION[best];
}
