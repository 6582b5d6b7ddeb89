/**
 * The eight stateful API classes of BFCL v3 multi-turn behind one interface: a fresh instance per episode, its
 * state loaded from an entry's `initial_config[name]`, methods called by name with keyword (and optionally
 * positional) arguments, results exactly as the Python methods return them (render them with `renderResult` from
 * ./py.ts to get the text BFCL's execution records), Python exceptions as `ApiCallError` with Python's message, and
 * the public attributes the BFCL checker compares as plain JSON (`state()`; compare it order-insensitively, as
 * Python compares dicts, and with 1 == 1.0).
 */
import { ApiCallError } from "./base.ts";
import { GorillaFileSystem } from "./gorilla_file_system.ts";
import { MathAPI } from "./math_api.ts";
import { MessageAPI } from "./message_api.ts";
import { TwitterAPI } from "./posting_api.ts";
import { TicketAPI } from "./ticket_api.ts";
import { TradingBot } from "./trading_bot.ts";
import { TravelAPI } from "./travel_booking.ts";
import { VehicleControlAPI } from "./vehicle_control.ts";

export { ApiCallError };
export { DOC_FILES, type FunctionDoc, functionDocs } from "./docs.ts";

/** One BFCL API class instance. */
export interface ApiClass {
  /** BFCL's class name ("GorillaFileSystem", "MathAPI", ...). */
  readonly name: string;
  /** Loads `initial_config[name]` (deep-copied by the caller or not: the instance never keeps the caller's objects). */
  loadScenario(config: Record<string, unknown>, longContext?: boolean): void;
  /**
   * Calls a public method. Returns what the Python method returns (dicts as plain objects, None as null, integral
   * floats as `PyFloat`); throws `ApiCallError` where Python raises, with Python's message (a missing argument or
   * an unknown keyword gives CPython's TypeError text).
   */
  call(method: string, args: Record<string, unknown>, positional?: readonly unknown[]): unknown;
  /** Public method names, sorted. */
  methods(): readonly string[];
  /** A method's parameter names in order (to bind positional arguments), or undefined for an unknown method. */
  parameters(method: string): readonly string[] | undefined;
  /** Public attributes (those the BFCL checker compares), as plain JSON values. */
  state(): Record<string, unknown>;
  /** What later calls depend on beyond `state()` (GorillaFileSystem: its working directory), as plain JSON values. */
  position?(): Record<string, unknown>;
}

const FACTORIES: Record<string, () => ApiClass> = {
  GorillaFileSystem: () => new GorillaFileSystem(),
  MathAPI: () => new MathAPI(),
  MessageAPI: () => new MessageAPI(),
  TwitterAPI: () => new TwitterAPI(),
  TicketAPI: () => new TicketAPI(),
  TradingBot: () => new TradingBot(),
  TravelAPI: () => new TravelAPI(),
  VehicleControlAPI: () => new VehicleControlAPI(),
};

/** BFCL's class names this module implements, in BFCL's documentation order. */
export const CLASS_NAMES: readonly string[] = Object.keys(FACTORIES);

/** A fresh, unloaded instance of a BFCL class; throws RangeError naming the known classes for an unknown name. */
export function newInstance(className: string): ApiClass {
  const make = Object.hasOwn(FACTORIES, className) ? FACTORIES[className] : undefined;
  if (!make) throw new RangeError(`Unknown BFCL class ${className}; known: ${CLASS_NAMES.join(", ")}`);
  return make();
}
