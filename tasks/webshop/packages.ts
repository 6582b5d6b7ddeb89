/**
 * The npm packages of WebShop's reward, pinned: wink-nlp and its English model (the tagger of nouns.ts) and fuzzball
 * (thefuzz's ratios, reward.ts), all MIT. They are imported by these specifiers, held in variables, when the reward's
 * modules are first loaded (with the server, the oracle or the vocabulary), so commands that never play WebShop do not
 * fetch them (docs/first-run.md); `deno task compile` includes them by name.
 */
export const WEBSHOP_PACKAGES = {
  wink: "npm:wink-nlp@2.4.0",
  winkModel: "npm:wink-eng-lite-web-model@1.8.1",
  fuzzball: "npm:fuzzball@2.2.6",
} as const;
