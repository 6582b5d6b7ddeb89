/**
 * The tool documents of BFCL's eight classes, as BFCL ships them (`data/multi_turn_func_doc/*.json`, one JSON
 * object per line: name, description, parameters {type: "dict", properties, required}, response), copied into
 * tasks/bfcl/data/func_doc/ (Apache-2.0, see the README there). These are what BFCL puts in the model's prompt.
 */
import fileSystem from "../data/func_doc/gorilla_file_system.jsonl" with { type: "text" };
import math from "../data/func_doc/math_api.jsonl" with { type: "text" };
import message from "../data/func_doc/message_api.jsonl" with { type: "text" };
import posting from "../data/func_doc/posting_api.jsonl" with { type: "text" };
import ticket from "../data/func_doc/ticket_api.jsonl" with { type: "text" };
import trading from "../data/func_doc/trading_bot.jsonl" with { type: "text" };
import travel from "../data/func_doc/travel_booking.jsonl" with { type: "text" };
import vehicle from "../data/func_doc/vehicle_control.jsonl" with { type: "text" };

/** One BFCL function document. */
export interface FunctionDoc {
  /** The function's name as the model calls it. */
  name: string;
  /** What it does, as BFCL's documentation says. */
  description: string;
  /** Its parameters as a JSON schema object. */
  parameters: {
    type: string;
    properties: Record<string, { type: string; description?: string; default?: unknown; [k: string]: unknown }>;
    required: string[];
  };
  /** What it returns, as BFCL documents it. */
  response?: unknown;
}

const TEXTS: Record<string, string> = {
  GorillaFileSystem: fileSystem,
  MathAPI: math,
  MessageAPI: message,
  TwitterAPI: posting,
  TicketAPI: ticket,
  TradingBot: trading,
  TravelAPI: travel,
  VehicleControlAPI: vehicle,
};

/** BFCL's documents file name (under data/multi_turn_func_doc/) for each class. */
export const DOC_FILES: Readonly<Record<string, string>> = {
  GorillaFileSystem: "gorilla_file_system.json",
  MathAPI: "math_api.json",
  MessageAPI: "message_api.json",
  TwitterAPI: "posting_api.json",
  TicketAPI: "ticket_api.json",
  TradingBot: "trading_bot.json",
  TravelAPI: "travel_booking.json",
  VehicleControlAPI: "vehicle_control.json",
};

const cache = new Map<string, FunctionDoc[]>();

/** The function documents of a class, in BFCL's file order; a fresh copy each call. */
export function functionDocs(className: string): FunctionDoc[] {
  if (!Object.hasOwn(TEXTS, className)) {
    throw new RangeError(`No BFCL function documents for class ${className}; known: ${Object.keys(TEXTS).join(", ")}`);
  }
  if (!cache.has(className)) {
    const lines = TEXTS[className].split("\n").filter((l) => l.trim() !== "");
    cache.set(className, lines.map((l) => JSON.parse(l) as FunctionDoc));
  }
  return structuredClone(cache.get(className)!);
}
