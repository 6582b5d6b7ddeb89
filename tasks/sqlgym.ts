/** SQLGym (BIRD): answer a question with one SQLite query. Items 0-9427 train, 9428-10961 dev. */
import { sqlgymAdapter } from "../src/env/adapters/sqlgym.ts";
import { ranges } from "../src/task/splits.ts";
import { type Task, upstreamSuccess } from "../src/task/task.ts";

/** Upstream's rule: the text after the last "```sql", up to the next "```", trimmed. */
export function sqlAction(text: string): string {
  const parts = text.split("```sql");
  return parts[parts.length - 1].split("```")[0].trim();
}

/** BIRD item ranges. */
export const SQLGYM_SPLITS = { train: ranges([0, 9427]), dev: ranges([9428, 10961]) };

/** The SQLGym task: one round, a single query. */
export const sqlgym: Task = {
  name: "sqlgym",
  adapter: sqlgymAdapter,
  prompt: {
    user: "You will be given the description of an SQLite database and a question; help answer it by querying the " +
      "database with SQL.\n\nFirst explain the problem and your approach, writing down your reasoning. Then give " +
      "one SQL statement that answers the question.\n\nAnswer like this:\nThought: your reasoning.\n\n" +
      "Action: ```sql\nSELECT * FROM table WHERE condition;\n```\n\nPut the SQL in a markdown block with nothing " +
      "else in it, on one line. Each turn runs exactly one SQL statement.",
    assistant: "Ok.",
  },
  parseAction: (text) => ({ action: sqlAction(text) }),
  isSuccess: upstreamSuccess,
  maxRounds: 1,
};
