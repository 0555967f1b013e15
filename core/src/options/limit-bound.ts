/** The largest value a limit column holds (Postgres integer). No imports: the console's forms check it too. */
export const MAX_LIMIT = 2_147_483_647;
