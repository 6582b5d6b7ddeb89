/**
 * BFCL's TravelAPI (travel_booking.py): authentication, credit cards, flight costs and bookings, invoices,
 * insurance, budget limits, exchange rates and traveler checks, with the exact result and error texts. Tokens, card
 * ids, card balances, booking, transaction and insurance ids come from Python's `random.Random(random_seed)`
 * (default 141053) in BFCL's order of draws. Flight costs: a route's base cost times the class factor (1, 2, 5),
 * doubled when the date's digits sum to an even number; long context lists every route's cost. Two texts print a
 * Python set, whose order varies per process in Python; here they use {'economy', 'business', 'first'}.
 * `verify_traveler_information` computes age against today's date, as BFCL does.
 * State compared: credit_card_list, booking_record, access_token, token_type, token_expires_in, token_scope,
 * user_first_name, user_last_name, budget_limit, long_context.
 */
import { ApiCallError, expectStr, type MethodSpec, PyApiBase } from "./base.ts";
import { longContext } from "./long_context.ts";
import {
  dictEntries,
  hashKey,
  numValue,
  pyArith,
  pyCompare,
  pyDeepCopy,
  pyEq,
  pyFloat,
  pyFloatOf,
  pyRepr,
  pyRound,
  pyStr,
  pyTypeName,
  toPlain,
} from "./py.ts";
import { PyRandom } from "../../../src/util/py_random.ts";

type Rec = Record<string, unknown>;

/** Routes and base costs in BFCL's order (the long-context cost list follows it). */
const ROUTES: [string, string, number][] = [
  ["SFO", "LAX", 200],
  ["SFO", "JFK", 500],
  ["SFO", "ORD", 400],
  ["SFO", "BOS", 450],
  ["SFO", "RMS", 300],
  ["SFO", "SBK", 350],
  ["SFO", "MPC", 370],
  ["SFO", "SVP", 320],
  ["SFO", "SHD", 330],
  ["SFO", "SSV", 340],
  ["SFO", "OKD", 360],
  ["SFO", "WLB", 310],
  ["SFO", "CRH", 380],
  ["SFO", "ATV", 390],
  ["SFO", "PHV", 420],
  ["SFO", "GFD", 430],
  ["SFO", "CIA", 700],
  ["LAX", "SFO", 100],
  ["LAX", "JFK", 600],
  ["LAX", "ORD", 500],
  ["LAX", "BOS", 550],
  ["LAX", "RMS", 310],
  ["LAX", "SBK", 320],
  ["LAX", "MPC", 330],
  ["LAX", "SVP", 340],
  ["LAX", "SHD", 350],
  ["LAX", "SSV", 360],
  ["LAX", "OKD", 370],
  ["LAX", "WLB", 380],
  ["LAX", "CRH", 390],
  ["LAX", "ATV", 400],
  ["LAX", "PHV", 410],
  ["LAX", "GFD", 420],
  ["LAX", "HND", 430],
  ["JFK", "ORD", 300],
  ["JFK", "BOS", 250],
  ["JFK", "RMS", 450],
  ["JFK", "SBK", 460],
  ["JFK", "MPC", 470],
  ["JFK", "SVP", 480],
  ["JFK", "SHD", 490],
  ["JFK", "SSV", 500],
  ["JFK", "OKD", 510],
  ["JFK", "WLB", 520],
  ["JFK", "CRH", 530],
  ["JFK", "ATV", 540],
  ["JFK", "PHV", 550],
  ["JFK", "GFD", 560],
  ["JFK", "LAX", 570],
  ["JFK", "HND", 800],
  ["JFK", "PVG", 950],
  ["JFK", "PEK", 1000],
  ["ORD", "LAX", 180],
  ["ORD", "BOS", 200],
  ["ORD", "RMS", 350],
  ["ORD", "SBK", 360],
  ["ORD", "MPC", 370],
  ["ORD", "SVP", 380],
  ["ORD", "SHD", 390],
  ["ORD", "SSV", 400],
  ["ORD", "OKD", 410],
  ["ORD", "WLB", 420],
  ["ORD", "CRH", 430],
  ["ORD", "ATV", 440],
  ["ORD", "PHV", 450],
  ["ORD", "GFD", 460],
  ["BOS", "RMS", 400],
  ["BOS", "SBK", 410],
  ["BOS", "MPC", 420],
  ["BOS", "SVP", 430],
  ["BOS", "SHD", 440],
  ["BOS", "SSV", 450],
  ["BOS", "OKD", 460],
  ["BOS", "WLB", 470],
  ["BOS", "CRH", 480],
  ["BOS", "ATV", 490],
  ["BOS", "PHV", 500],
  ["BOS", "GFD", 510],
  ["RMS", "BOS", 200],
  ["RMS", "JFK", 210],
  ["RMS", "SBK", 220],
  ["RMS", "MPC", 230],
  ["RMS", "SVP", 240],
  ["RMS", "SHD", 250],
  ["RMS", "SSV", 260],
  ["RMS", "OKD", 270],
  ["RMS", "WLB", 280],
  ["RMS", "CRH", 290],
  ["RMS", "ATV", 300],
  ["RMS", "PHV", 310],
  ["RMS", "GFD", 320],
  ["RMS", "LAX", 330],
  ["SBK", "MPC", 200],
  ["SBK", "SVP", 210],
  ["SBK", "SHD", 220],
  ["SBK", "SSV", 230],
  ["SBK", "OKD", 240],
  ["SBK", "WLB", 250],
  ["SBK", "CRH", 260],
  ["SBK", "ATV", 270],
  ["SBK", "PHV", 280],
  ["SBK", "GFD", 290],
  ["MPC", "SVP", 210],
  ["MPC", "SHD", 220],
  ["MPC", "SSV", 230],
  ["MPC", "OKD", 240],
  ["MPC", "WLB", 250],
  ["MPC", "CRH", 260],
  ["MPC", "ATV", 270],
  ["MPC", "PHV", 280],
  ["MPC", "GFD", 290],
  ["SVP", "SHD", 230],
  ["SVP", "SSV", 240],
  ["SVP", "OKD", 250],
  ["SVP", "WLB", 260],
  ["SVP", "CRH", 270],
  ["SVP", "ATV", 280],
  ["SVP", "PHV", 290],
  ["SVP", "GFD", 300],
  ["SHD", "SSV", 220],
  ["SHD", "OKD", 230],
  ["SHD", "WLB", 240],
  ["SHD", "CRH", 250],
  ["SHD", "ATV", 260],
  ["SHD", "PHV", 270],
  ["SHD", "GFD", 280],
  ["SSV", "OKD", 240],
  ["SSV", "WLB", 250],
  ["SSV", "CRH", 260],
  ["SSV", "ATV", 270],
  ["SSV", "PHV", 280],
  ["SSV", "GFD", 290],
  ["OKD", "WLB", 230],
  ["OKD", "CRH", 240],
  ["OKD", "ATV", 250],
  ["OKD", "PHV", 260],
  ["OKD", "GFD", 270],
  ["WLB", "CRH", 250],
  ["WLB", "ATV", 260],
  ["WLB", "PHV", 270],
  ["WLB", "GFD", 280],
  ["CRH", "ATV", 240],
  ["CRH", "PHV", 250],
  ["CRH", "GFD", 260],
  ["CRH", "SFO", 270],
  ["CRH", "RMS", 280],
  ["CRH", "HKG", 290],
  ["CRH", "JFK", 300],
  ["ATV", "PHV", 230],
  ["ATV", "GFD", 240],
  ["PHV", "GFD", 220],
  ["LHR", "CDG", 100],
  ["OKD", "LAX", 220],
];

const BASE_COST = new Map(ROUTES.map(([a, b, c]) => [`${a}|${b}`, c]));

const AIRPORTS = [
  "RMS",
  "SBK",
  "MPC",
  "SVP",
  "SHD",
  "CDG",
  "LHR",
  "SSV",
  "OKD",
  "WLB",
  "PEK",
  "HND",
  "HKG",
  "CIA",
  "CRH",
  "ATV",
  "PHV",
  "GFD",
  "SFO",
  "LAX",
  "JFK",
  "ORD",
  "BOS",
];

const CITY_AIRPORT: Record<string, string> = {
  Rivermist: "RMS",
  Stonebrook: "SBK",
  Maplecrest: "MPC",
  Silverpine: "SVP",
  Shadowridge: "SHD",
  London: "LHR",
  Paris: "CDG",
  "Sunset Valley": "SSV",
  Oakendale: "OKD",
  Willowbend: "WLB",
  "Crescent Hollow": "CRH",
  Autumnville: "ATV",
  Pinehaven: "PHV",
  Greenfield: "GFD",
  "San Francisco": "SFO",
  "Los Angeles": "LAX",
  "New York": "JFK",
  Chicago: "ORD",
  Boston: "BOS",
  Beijing: "PEK",
  "Hong Kong": "HKG",
  Rome: "CIA",
  Tokyo: "HND",
};

const EXCHANGE: [string, string, number][] = [
  ["USD", "RMB", 7],
  ["USD", "EUR", 0.8],
  ["USD", "JPY", 110],
  ["USD", "GBP", 0.7],
  ["USD", "CAD", 1.3],
  ["USD", "AUD", 1.4],
  ["USD", "INR", 70],
  ["USD", "RUB", 60],
  ["USD", "BRL", 3.8],
  ["USD", "MXN", 20],
];

const CLASS_FACTOR: Record<string, number> = { economy: 1, business: 2, first: 5 };

/** Whether `datetime.strptime(s, "%Y-%m-%d")` accepts s; its (year, month, day) when it does. */
function strptimeDate(s: unknown): [number, number, number] | undefined {
  if (typeof s !== "string") {
    throw new ApiCallError(`strptime() argument 1 must be str, not ${pyTypeName(s)}`, "TypeError");
  }
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(s);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return undefined;
  return [y, mo, d];
}

/** The travel class; one instance per episode. */
export class TravelAPI extends PyApiBase {
  readonly name = "TravelAPI";
  creditCardList = new Map<unknown, Rec>();
  bookingRecord = new Map<unknown, Rec>();
  accessToken: unknown = null;
  tokenType: unknown = null;
  tokenExpiresIn: unknown = null;
  tokenScope: unknown = null;
  userFirstName: unknown = null;
  userLastName: unknown = null;
  budgetLimit: unknown = null;
  longContext = false;
  #random = new PyRandom(141053);
  #flightCostLookup = new Map<string, unknown>();

  loadScenario(config: Record<string, unknown>, longContext = false): void {
    const c = pyDeepCopy(config);
    this.#random = new PyRandom(BigInt((c.random_seed ?? 141053) as number));
    this.creditCardList = new Map(dictEntries((c.credit_card_list ?? {}) as object) as [unknown, Rec][]);
    this.bookingRecord = new Map(dictEntries((c.booking_record ?? {}) as object) as [unknown, Rec][]);
    this.accessToken = c.access_token ?? null;
    this.tokenType = c.token_type ?? null;
    this.tokenExpiresIn = c.token_expires_in ?? null;
    this.tokenScope = c.token_scope ?? null;
    this.userFirstName = c.user_first_name ?? null;
    this.userLastName = c.user_last_name ?? null;
    this.budgetLimit = c.budget_limit ?? null;
    this.longContext = longContext;
    this.#flightCostLookup = new Map();
    if (longContext) {
      for (const [id, card] of Object.entries(longContext_("CREDIT_CARD_EXTENSION"))) {
        if (!this.creditCardList.has(id)) this.creditCardList.set(id, card as Rec);
      }
      for (const [id, booking] of Object.entries(longContext_("BOOKING_RECORD_EXTENSION"))) {
        if (!this.bookingRecord.has(id)) this.bookingRecord.set(id, booking as Rec);
      }
    }
  }

  state(): Record<string, unknown> {
    return toPlain({
      credit_card_list: this.creditCardList,
      booking_record: this.bookingRecord,
      access_token: this.accessToken,
      token_type: this.tokenType,
      token_expires_in: this.tokenExpiresIn,
      token_scope: this.tokenScope,
      user_first_name: this.userFirstName,
      user_last_name: this.userLastName,
      budget_limit: this.budgetLimit,
      long_context: this.longContext,
    }) as Record<string, unknown>;
  }

  #expired(): boolean {
    return pyEq(this.tokenExpiresIn, 0);
  }

  #badToken(token: unknown): boolean {
    return !pyEq(token, this.accessToken);
  }

  /** get_flight_cost's body: the cost list, or a ValueError with BFCL's message. */
  #flightCost(from: unknown, to: unknown, date: unknown, travelClass: unknown): unknown[] {
    hashKey(from);
    hashKey(to);
    const base = typeof from === "string" && typeof to === "string" ? BASE_COST.get(`${from}|${to}`) : undefined;
    if (base === undefined) throw new ApiCallError("No available route for the given airports.", "ValueError");
    const factor = typeof travelClass === "string" && Object.hasOwn(CLASS_FACTOR, travelClass)
      ? CLASS_FACTOR[travelClass]
      : undefined;
    if (factor === undefined) {
      throw new ApiCallError("Invalid travel class. Options are: economy, business, first.", "ValueError");
    }
    if (typeof date !== "string") {
      throw new ApiCallError(`'${pyTypeName(date)}' object is not iterable`, "TypeError");
    }
    const digitSum = [...date].filter((ch) => /\d/.test(ch)).reduce((s, ch) => s + Number(ch), 0);
    const mult = digitSum % 2 === 0 ? 2 : 1;
    const key = (a: unknown, b: unknown) => `${pyStr(a)}|${pyStr(b)}|${pyStr(travelClass)}|${pyStr(date)}`;
    if (this.longContext) {
      this.#flightCostLookup = new Map();
      return ROUTES.map(([a, b, c]) => {
        const cost = pyFloat(c * factor * mult);
        this.#flightCostLookup.set(key(a, b), cost);
        return cost;
      });
    }
    const cost = pyFloat(base * factor * mult);
    this.#flightCostLookup = new Map([[key(from, to), cost]]);
    return [cost];
  }

  protected readonly table: Record<string, MethodSpec> = {
    authenticate_travel: {
      params: ["client_id", "client_secret", "refresh_token", "grant_type", "user_first_name", "user_last_name"],
      run: ({ grant_type, user_first_name, user_last_name }) => {
        this.tokenExpiresIn = 2;
        this.accessToken = String(this.#random.randint(100000, 999999));
        this.tokenType = "Bearer";
        this.tokenScope = grant_type;
        this.userFirstName = user_first_name;
        this.userLastName = user_last_name;
        return { expires_in: 2, access_token: this.accessToken, token_type: "Bearer", scope: grant_type };
      },
    },
    travel_get_login_status: {
      params: [],
      run: () => ({ status: !(this.tokenExpiresIn === null || pyEq(this.tokenExpiresIn, 0)) }),
    },
    get_budget_fiscal_year: {
      params: [["lastModifiedAfter", null], ["includeRemoved", null]],
      run: () => ({ budget_fiscal_year: "2018" }),
    },
    register_credit_card: {
      params: ["access_token", "card_number", "expiration_date", "cardholder_name", "card_verification_number"],
      run: ({ access_token, card_number, expiration_date, cardholder_name, card_verification_number }) => {
        if (this.tokenExpiresIn === null) return { error: "Token not initialized" };
        if (this.#expired()) return { error: "Token expired" };
        if (this.#badToken(access_token)) return { error: "Invalid access token" };
        if (this.creditCardList.has(hashKey(card_number))) return { error: "Card already registered" };
        const cardId = String(this.#random.randint(100000000000, 999999999999));
        this.creditCardList.set(cardId, {
          card_number,
          expiration_date,
          cardholder_name,
          card_verification_number,
          balance: this.#random.randint(10000, 99999),
        });
        return { card_id: cardId };
      },
    },
    get_flight_cost: {
      params: ["travel_from", "travel_to", "travel_date", "travel_class"],
      run: ({ travel_from, travel_to, travel_date, travel_class }) => ({
        travel_cost_list: this.#flightCost(travel_from, travel_to, travel_date, travel_class),
      }),
    },
    get_credit_card_balance: {
      params: ["access_token", "card_id"],
      run: ({ access_token, card_id }) => {
        if (this.#expired()) return { error: "Token expired" };
        if (this.#badToken(access_token)) return { error: "Invalid access token" };
        const card = this.creditCardList.get(hashKey(card_id));
        if (!card) {
          return {
            error: `Card not registered. Here are a list of card_id's: ${pyRepr([...this.creditCardList.keys()])}`,
          };
        }
        return { card_balance: card.balance };
      },
    },
    book_flight: {
      params: ["access_token", "card_id", "travel_date", "travel_from", "travel_to", "travel_class"],
      run: ({ access_token, card_id, travel_date, travel_from, travel_to, travel_class }) => {
        const fail = (error: string) => ({ booking_status: false, error });
        if (this.#expired()) return fail("Token expired");
        if (this.#badToken(access_token)) return fail("Invalid access token");
        const card = this.creditCardList.get(hashKey(card_id));
        if (!card) return fail("Card not registered");
        if (!("balance" in card)) return fail("Balance not found");
        if (!AIRPORTS.some((a) => pyEq(a, travel_from))) {
          return fail(`Invalid departure airport code: ${pyStr(travel_from)}`);
        }
        if (!AIRPORTS.some((a) => pyEq(a, travel_to))) {
          return fail(`Invalid destination airport code: ${pyStr(travel_to)}`);
        }
        if (!strptimeDate(travel_date)) return fail("Invalid date format. Use YYYY-MM-DD.");
        if (!(typeof travel_class === "string" && Object.hasOwn(CLASS_FACTOR, travel_class))) {
          return fail("Invalid travel class. Must be one of {'economy', 'business', 'first'}");
        }
        let cost: unknown;
        try {
          this.#flightCost(travel_from, travel_to, travel_date, travel_class);
          const key = `${pyStr(travel_from)}|${pyStr(travel_to)}|${pyStr(travel_class)}|${pyStr(travel_date)}`;
          if (!this.#flightCostLookup.has(key)) return fail("No available route for the given parameters");
          cost = this.#flightCostLookup.get(key);
        } catch (e) {
          if (e instanceof ApiCallError && e.pythonType === "ValueError") return fail(e.message);
          throw e;
        }
        if (pyCompare(card.balance, "<", cost)) return fail("Insufficient funds");
        if (this.budgetLimit !== null && pyCompare(card.balance, "<", this.budgetLimit)) {
          return fail("Balance is less than budget limit");
        }
        card.balance = pyArith(card.balance, cost, "-", "-=");
        const bookingId = String(this.#random.randint(1000000, 9999999));
        const transactionId = String(this.#random.randint(10000000, 99999999));
        this.bookingRecord.set(bookingId, {
          card_id,
          travel_date,
          travel_from,
          travel_to,
          travel_class,
          travel_cost: cost,
          transaction_id: transactionId,
        });
        return {
          booking_id: bookingId,
          transaction_id: transactionId,
          booking_status: true,
          booking_history: this.longContext ? this.bookingRecord : {},
        };
      },
    },
    retrieve_invoice: {
      params: ["access_token", ["booking_id", null], ["insurance_id", null]],
      run: ({ access_token, booking_id }) => {
        if (this.#expired()) return { error: "Token expired" };
        if (this.#badToken(access_token)) return { error: "Invalid access token" };
        const b = this.bookingRecord.get(hashKey(booking_id));
        if (!b) return { error: "Booking not found" };
        return {
          invoice: {
            booking_id,
            travel_date: b.travel_date,
            travel_from: b.travel_from,
            travel_to: b.travel_to,
            travel_class: b.travel_class,
            travel_cost: b.travel_cost,
            transaction_id: b.transaction_id,
          },
        };
      },
    },
    get_booking_history: {
      params: ["access_token"],
      run: ({ access_token }) => {
        if (this.#expired()) return { error: "Token expired" };
        if (this.#badToken(access_token)) return { error: "Invalid access token" };
        return { booking_history: pyDeepCopy(this.bookingRecord) };
      },
    },
    list_all_airports: { params: [], run: () => [...AIRPORTS] },
    cancel_booking: {
      params: ["access_token", "booking_id"],
      run: ({ access_token, booking_id }) => {
        if (this.#expired()) return { cancel_status: false, error: "Token expired" };
        if (this.#badToken(access_token)) return { cancel_status: false, error: "Invalid access token" };
        const b = this.bookingRecord.get(hashKey(booking_id));
        if (!b) return { cancel_status: false, error: "Booking not found" };
        const card = this.creditCardList.get(hashKey(b.card_id));
        if (!card) throw new ApiCallError(pyRepr(b.card_id), "KeyError");
        card.balance = pyArith(card.balance, b.travel_cost, "+", "+=");
        this.bookingRecord.delete(hashKey(booking_id));
        return { cancel_status: true };
      },
    },
    compute_exchange_rate: {
      params: ["base_currency", "target_currency", "value"],
      run: ({ base_currency, target_currency, value }) => {
        for (const [a, b, rate] of EXCHANGE) {
          if (pyEq(base_currency, a) && pyEq(target_currency, b)) {
            return { exchanged_value: pyFloat(pyFloatOf(pyArith(value, rate, "*"))) };
          }
          if (pyEq(base_currency, b) && pyEq(target_currency, a)) {
            const v = numValue(value);
            if (v === undefined) {
              throw new ApiCallError(
                `unsupported operand type(s) for /: '${pyTypeName(value)}' and '${
                  Number.isInteger(rate) ? "int" : "float"
                }'`,
                "TypeError",
              );
            }
            return { exchanged_value: pyFloat(pyRound(v / rate, 2)) };
          }
        }
        throw new ApiCallError("No available exchange rate for the given currencies.", "ValueError");
      },
    },
    verify_traveler_information: {
      params: ["first_name", "last_name", "date_of_birth", "passport_number"],
      run: ({ first_name, last_name, date_of_birth, passport_number }) => {
        if (!pyEq(this.userFirstName, first_name) || !pyEq(this.userLastName, last_name)) {
          return {
            verification_status: false,
            verification_failure: "Cannot book flight information for another user." +
              `Expected ${pyStr(this.userFirstName)} ${pyStr(this.userLastName)}, got ${pyStr(first_name)} ${
                pyStr(last_name)
              }`,
          };
        }
        const birth = strptimeDate(date_of_birth);
        if (!birth) {
          return {
            verification_status: false,
            verification_failure: "Invalid date of birth format. Please use YYYY-MM-DD.",
          };
        }
        const now = new Date();
        const [m, d] = [now.getMonth() + 1, now.getDate()];
        const age = now.getFullYear() - birth[0] - ((m < birth[1] || (m === birth[1] && d < birth[2])) ? 1 : 0);
        if (age < 18) {
          return { verification_status: false, verification_failure: "Traveler must be at least 18 years old." };
        }
        if (!expectStr(passport_number, "startswith").startsWith("US")) {
          return { verification_status: false, verification_failure: "Passport must be issued by the United States." };
        }
        return { verification_status: true };
      },
    },
    set_budget_limit: {
      params: ["access_token", "budget_limit"],
      run: ({ access_token, budget_limit }) => {
        if (this.#expired()) return { error: "Token expired" };
        if (this.#badToken(access_token)) return { error: "Invalid access token" };
        const limit = pyFloat(pyFloatOf(budget_limit));
        this.budgetLimit = limit;
        return { budget_limit: limit };
      },
    },
    get_nearest_airport_by_city: {
      params: ["location"],
      run: ({ location }) => ({
        nearest_airport: typeof location === "string" && Object.hasOwn(CITY_AIRPORT, location)
          ? CITY_AIRPORT[location]
          : "Unknown",
      }),
    },
    purchase_insurance: {
      params: ["access_token", "insurance_type", "booking_id", "insurance_cost", "card_id"],
      run: ({ access_token, booking_id, insurance_cost, card_id }) => {
        if (this.#expired()) return { insurance_status: false, error: "Token expired" };
        if (this.#badToken(access_token)) return { insurance_status: false, error: "Invalid access token" };
        if (this.budgetLimit !== null && pyCompare(this.budgetLimit, "<", insurance_cost)) {
          return { insurance_status: false, error: "Exceeded budget limit" };
        }
        if (!this.bookingRecord.has(hashKey(booking_id))) {
          return { insurance_status: false, error: "Booking not found" };
        }
        const card = this.creditCardList.get(hashKey(card_id));
        if (!card) return { insurance_status: false, error: "Credit card not registered" };
        card.balance = pyArith(card.balance, insurance_cost, "-", "-=");
        return { insurance_id: String(this.#random.randint(100000000, 999999999)), insurance_status: true };
      },
    },
    contact_customer_support: {
      params: ["booking_id", "message"],
      run: ({ booking_id }) => {
        if (!this.bookingRecord.has(hashKey(booking_id))) return { error: "Booking not found" };
        return {
          customer_support_message:
            "Thank you for contacting customer support. Your message has been received and we will get back to you shortly.",
        };
      },
    },
    get_all_credit_cards: { params: [], run: () => ({ credit_card_list: this.creditCardList }) },
  };
}

/** One long-context constant as a record. */
function longContext_(name: string): Record<string, unknown> {
  return longContext(name) as Record<string, unknown>;
}
