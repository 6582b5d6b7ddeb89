/**
 * BFCL's TradingBot: stocks, orders, an account and a watch list, with the exact result and error texts. Transaction
 * timestamps are drawn from Python's `random.Random(random_seed)` (default 1053520) as a second within the day after
 * the fixed clock 2024-09-01 10:30 (BFCL goes through the machine's local time and back, which cancels out except
 * across a DST change; this reproduces the UTC result). Long context swaps in BFCL's long lists (moving averages,
 * order metadata, watch list, transactions, sectors), Ellipsis included.
 * State compared: orders, account_info, authenticated, market_status, order_counter, stocks, watch_list,
 * transaction_history, long_context.
 */
import { ApiCallError, type MethodSpec, PyApiBase } from "./base.ts";
import { longContext } from "./long_context.ts";
import {
  dictEntries,
  formatFixed,
  hashKey,
  numValue,
  pyArith,
  pyCompare,
  pyDeepCopy,
  pyEq,
  PyFloat,
  pyFloat,
  pyFloatOf,
  pyInt,
  pyIter,
  pyLower,
  pyRepr,
  pyStr,
  pyTypeName,
  toPlain,
  truthy,
} from "./py.ts";
import { PyRandom } from "../../../src/util/py_random.ts";

type Rec = Record<string, unknown>;

const F = (x: number) => new PyFloat(x);

function stock(price: number, change: number, volume: number, ma5: number, ma20: number): Rec {
  const f = (x: number) => pyFloat(x);
  return { price: f(price), percent_change: f(change), volume: f(volume), "MA(5)": f(ma5), "MA(20)": f(ma20) };
}

function defaultState(): Rec {
  return {
    orders: new Map<unknown, Rec>([
      [12345, { id: 12345, order_type: "Buy", symbol: "AAPL", price: 210.65, amount: 10, status: "Completed" }],
      [12446, { id: 12446, order_type: "Sell", symbol: "GOOG", price: 2840.56, amount: 5, status: "Pending" }],
    ]),
    account_info: { account_id: 12345, balance: F(10000), binding_card: 1974202140965533 },
    authenticated: false,
    market_status: "Closed",
    order_counter: 12446,
    stocks: new Map<unknown, Rec>([
      ["AAPL", stock(227.16, 0.17, 2.552, 227.11, 227.09)],
      ["GOOG", stock(2840.34, 0.24, 1.123, 2835.67, 2842.15)],
      ["TSLA", stock(667.92, -0.12, 1.654, 671.15, 668.2)],
      ["MSFT", stock(310.23, 0.09, 3.234, 309.88, 310.11)],
      ["NVDA", stock(220.34, 0.34, 1.234, 220.45, 220.67)],
      ["ALPH", stock(1320.45, -0.08, 1.567, 1321.12, 1325.78)],
      ["OMEG", stock(457.23, 0.12, 2.345, 456.78, 458.12)],
      ["QUAS", stock(725.89, -0.03, 1.789, 726.45, 728)],
      ["NEPT", stock(88.34, 0.19, 0.654, 88.21, 88.67)],
      ["SYNX", stock(345.67, 0.11, 2.112, 345.34, 346.12)],
      ["ZETA", stock(22.09, -0.05, 0.789, 22.12, 22.34)],
    ]),
    watch_list: ["NVDA"],
    transaction_history: [],
    random_seed: 1053520,
  };
}

const SYMBOLS: Record<string, string> = {
  Apple: "AAPL",
  Google: "GOOG",
  Tesla: "TSLA",
  Microsoft: "MSFT",
  Nvidia: "NVDA",
  "Zeta Corp": "ZETA",
  "Alpha Tech": "ALPH",
  "Omega Industries": "OMEG",
  "Quasar Ltd.": "QUAS",
  "Neptune Systems": "NEPT",
  "Synex Solutions": "SYNX",
  Amazon: "AMZN",
  Gorilla: "GORI",
};

/** 2024-09-01 10:30:00 as epoch seconds in UTC; BFCL's draw is an offset of 0..86400 s from it. */
const CLOCK_MS = Date.UTC(2024, 8, 1, 10, 30);

/** "YYYY-MM-DD HH:MM:SS" of a UTC epoch in ms. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

/** Python's `datetime.strptime(s, "%Y-%m-%d")` as a sortable "YYYY-MM-DD 00:00:00", or its ValueError. */
function parseDate(s: unknown): string {
  const m = typeof s === "string" ? /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(s) : null;
  if (!m) {
    if (typeof s !== "string") {
      throw new ApiCallError(`strptime() argument 1 must be str, not ${pyTypeName(s)}`, "TypeError");
    }
    throw new ApiCallError(`time data ${pyRepr(s)} does not match format '%Y-%m-%d'`, "ValueError");
  }
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) throw new ApiCallError(`time data ${pyRepr(s)} does not match format '%Y-%m-%d'`);
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d < 1 || d > days) {
    if (d > 31 || d < 1) throw new ApiCallError(`time data ${pyRepr(s)} does not match format '%Y-%m-%d'`);
    throw new ApiCallError("day is out of range for month", "ValueError");
  }
  return `${m[1]}-${String(mo).padStart(2, "0")}-${String(d).padStart(2, "0")} 00:00:00`;
}

/** The trading class; one instance per episode. */
export class TradingBot extends PyApiBase {
  readonly name = "TradingBot";
  orders = new Map<unknown, Rec>();
  accountInfo: Rec = {};
  authenticated: unknown = false;
  marketStatus: unknown = "Closed";
  orderCounter: unknown = 12446;
  stocks = new Map<unknown, Rec>();
  watchList: unknown[] = [];
  transactionHistory: Rec[] = [];
  longContext = false;
  #random = new PyRandom(1053520);

  constructor() {
    super();
    this.loadScenario({});
  }

  loadScenario(config: Record<string, unknown>, longContext = false): void {
    const c = pyDeepCopy(config);
    const d = defaultState();
    const orders = c.orders ?? d.orders;
    this.orders = new Map(
      dictEntries(orders as object).map((
        [k, v],
      ) => [typeof k === "string" && /^\d+$/.test(k) ? Number(k) : k, v as Rec]),
    );
    this.accountInfo = (c.account_info ?? d.account_info) as Rec;
    this.authenticated = c.authenticated ?? d.authenticated;
    this.marketStatus = c.market_status ?? d.market_status;
    this.orderCounter = c.order_counter ?? d.order_counter;
    this.stocks = new Map(dictEntries((c.stocks ?? d.stocks) as object) as [unknown, Rec][]);
    this.watchList = (c.watch_list ?? d.watch_list) as unknown[];
    this.transactionHistory = (c.transaction_history ?? d.transaction_history) as Rec[];
    this.longContext = longContext;
    this.#random = new PyRandom(BigInt((c.random_seed ?? d.random_seed) as number));
  }

  state(): Record<string, unknown> {
    return toPlain({
      orders: this.orders,
      account_info: this.accountInfo,
      authenticated: this.authenticated,
      market_status: this.marketStatus,
      order_counter: this.orderCounter,
      stocks: this.stocks,
      watch_list: this.watchList,
      transaction_history: this.transactionHistory,
      long_context: this.longContext,
    }) as Record<string, unknown>;
  }

  #timestamp(): string {
    const offset = this.#random.randint(0, 86400);
    return stamp(CLOCK_MS + offset * 1000);
  }

  #auth(action: string): Rec | undefined {
    return truthy(this.authenticated) ? undefined : { error: `User not authenticated. Please log in to ${action}.` };
  }

  protected readonly table: Record<string, MethodSpec> = {
    get_current_time: { params: [], run: () => ({ current_time: "10:30 AM" }) },
    get_symbol_by_name: {
      params: ["name"],
      run: ({ name }) => ({
        symbol: typeof hashKey(name) === "string" && Object.hasOwn(SYMBOLS, name as string)
          ? SYMBOLS[name as string]
          : "Stock not found",
      }),
    },
    get_stock_info: {
      params: ["symbol"],
      run: ({ symbol }) => {
        const s = this.stocks.get(hashKey(symbol));
        if (!s) return { error: `Stock with symbol '${pyStr(symbol)}' not found.` };
        if (!this.longContext) return s;
        return { ...s, "MA(5)": longContext("MA_5_EXTENSION"), "MA(20)": longContext("MA_20_EXTENSION") };
      },
    },
    get_order_details: {
      params: ["order_id"],
      run: ({ order_id }) => {
        const order = this.orders.get(hashKey(order_id));
        if (!order) {
          return {
            error: `Order with ID ${pyStr(order_id)} not found.Here is the list of orders_id: ${
              pyRepr([...this.orders.keys()])
            }`,
          };
        }
        if (!this.longContext) return order;
        const metadata: Rec = {};
        const ext = longContext("ORDER_DETAIL_EXTENSION") as Record<string, string>;
        for (const [k, v] of Object.entries(ext)) metadata[k] = v.replaceAll("{symbol}", pyStr(order.symbol));
        return { ...order, metadata };
      },
    },
    cancel_order: {
      params: ["order_id"],
      run: ({ order_id }) => {
        const order = this.orders.get(hashKey(order_id));
        if (!order) return { error: `Order with ID ${pyStr(order_id)} not found.` };
        if (order.status === "Completed") {
          return { error: `Can't cancel order ${pyStr(order_id)}. Order is already completed.` };
        }
        order.status = "Cancelled";
        return { order_id, status: "Cancelled" };
      },
    },
    place_order: {
      params: ["order_type", "symbol", "price", "amount"],
      run: ({ order_type, symbol, price, amount }) => {
        const denied = this.#auth("place an order");
        if (denied) return denied;
        if (!this.stocks.has(hashKey(symbol))) return { error: `Invalid stock symbol: ${pyStr(symbol)}` };
        if (pyCompare(price, "<=", 0) || pyCompare(amount, "<=", 0)) {
          return { error: "Price and amount must be positive values." };
        }
        if (pyLower(order_type) === "buy") {
          const total = pyFloatOf(price) * pyInt(amount);
          const balance = this.accountInfo.balance ?? 0;
          if (pyCompare(total, ">", balance)) {
            const b = formatFixed(numValue(balance)!, 2);
            return { error: `Insufficient funds: required $${formatFixed(total, 2)} but only $${b} available.` };
          }
        }
        const p = pyFloat(pyFloatOf(price));
        const id = this.orderCounter;
        this.orders.set(hashKey(id), { id, order_type, symbol, price: p, amount, status: "Open" });
        this.orderCounter = pyArith(this.orderCounter, 1, "+", "+=");
        return { order_id: id, order_type, status: "Pending", price: p, amount };
      },
    },
    withdraw_funds: {
      params: ["amount"],
      run: ({ amount }) => {
        const denied = this.#auth("make a transaction");
        if (denied) return denied;
        if (this.marketStatus !== "Open") return { error: "Market is closed. Transactions are not allowed." };
        if (pyCompare(amount, "<=", 0)) return { error: "Transaction amount must be positive." };
        if (pyCompare(amount, ">", this.accountInfo.balance)) return { error: "Insufficient funds for withdrawal." };
        this.accountInfo.balance = pyArith(this.accountInfo.balance, amount, "-", "-=");
        this.transactionHistory.push({ type: "withdrawal", amount, timestamp: this.#timestamp() });
        return { status: "Withdrawal successful", new_balance: this.accountInfo.balance };
      },
    },
    get_account_info: {
      params: [],
      run: () => this.#auth("view account information") ?? this.accountInfo,
    },
    trading_login: {
      params: ["username", "password"],
      run: () => {
        if (truthy(this.authenticated)) return { status: "Already logged in" };
        this.authenticated = true;
        return { status: "Logged in successfully" };
      },
    },
    trading_get_login_status: { params: [], run: () => ({ status: truthy(this.authenticated) }) },
    trading_logout: {
      params: [],
      run: () => {
        if (!truthy(this.authenticated)) return { status: "No user is currently logged in" };
        this.authenticated = false;
        return { status: "Logged out successfully" };
      },
    },
    fund_account: {
      params: ["amount"],
      run: ({ amount }) => {
        const denied = this.#auth("fund the account");
        if (denied) return denied;
        if (pyCompare(amount, "<=", 0)) return { error: "Funding amount must be positive." };
        this.accountInfo.balance = pyArith(this.accountInfo.balance, amount, "+", "+=");
        this.transactionHistory.push({ type: "deposit", amount, timestamp: this.#timestamp() });
        return { status: "Account funded successfully", new_balance: this.accountInfo.balance };
      },
    },
    remove_stock_from_watchlist: {
      params: ["symbol"],
      run: ({ symbol }) => {
        const denied = this.#auth("modify the watchlist");
        if (denied) return denied;
        const i = this.watchList.findIndex((s) => pyEq(s, symbol));
        if (i < 0) return { error: `Stock ${pyStr(symbol)} not found in watchlist.` };
        this.watchList.splice(i, 1);
        return { status: `Stock ${pyStr(symbol)} removed from watchlist successfully.` };
      },
    },
    get_watchlist: {
      params: [],
      run: () => {
        if (!truthy(this.authenticated)) {
          return ["Error: User not authenticated. Please log in to view the watchlist."];
        }
        if (this.longContext) return [...this.watchList, ...(longContext("WATCH_LIST_EXTENSION") as unknown[])];
        return { watchlist: this.watchList };
      },
    },
    get_order_history: {
      params: [],
      run: () => {
        if (!truthy(this.authenticated)) {
          return [{ error: "User not authenticated. Please log in to view order history." }];
        }
        return { history: [...this.orders.keys()] };
      },
    },
    get_transaction_history: {
      params: [["start_date", null], ["end_date", null]],
      run: ({ start_date, end_date }) => {
        if (!truthy(this.authenticated)) {
          return [{ error: "User not authenticated. Please log in to view transaction history." }];
        }
        const start = truthy(start_date) ? parseDate(start_date) : "";
        const end = truthy(end_date) ? parseDate(end_date) : "\uffff";
        const history: unknown[] = this.transactionHistory.filter((t) => {
          const ts = t.timestamp as string;
          return start <= ts && ts <= end;
        });
        if (this.longContext) history.push(...(longContext("TRANSACTION_HISTORY_EXTENSION") as unknown[]));
        return { transaction_history: history };
      },
    },
    get_available_stocks: {
      params: ["sector"],
      run: ({ sector }) => {
        const map: Record<string, unknown[]> = {
          Technology: ["AAPL", "GOOG", "MSFT", "NVDA"],
          Automobile: ["TSLA", "F", "GM"],
        };
        if (this.longContext) {
          map.Technology.push(...(longContext("TECHNOLOGY_EXTENSION") as unknown[]));
          map.Automobile.push(...(longContext("AUTOMOBILE_EXTENSION") as unknown[]));
        }
        return {
          stock_list: typeof hashKey(sector) === "string" && Object.hasOwn(map, sector as string)
            ? map[sector as string]
            : [],
        };
      },
    },
    filter_stocks_by_price: {
      params: ["stocks", "min_price", "max_price"],
      run: ({ stocks, min_price, max_price }) => {
        const price = (s: unknown) => this.stocks.get(hashKey(s))?.price ?? 0;
        return {
          filtered_stocks: pyIter(stocks).filter((s) =>
            pyCompare(price(s), ">=", min_price) && pyCompare(price(s), "<=", max_price)
          ),
        };
      },
    },
    add_to_watchlist: {
      params: ["stock"],
      run: ({ stock }) => {
        if (!this.watchList.some((s) => pyEq(s, stock)) && this.stocks.has(hashKey(stock))) this.watchList.push(stock);
        return { watchlist: this.watchList };
      },
    },
    notify_price_change: {
      params: ["stocks", "threshold"],
      run: ({ stocks, threshold }) => {
        const changed = pyIter(stocks).filter((s) => {
          const st = this.stocks.get(hashKey(s));
          return st !== undefined && pyCompare(Math.abs(numValue(st.percent_change)!), ">=", threshold);
        });
        if (changed.length > 0) {
          return { notification: `Stocks ${changed.map(pyStr).join(", ")} have significant price changes.` };
        }
        return { notification: "No significant price changes in the selected stocks." };
      },
    },
  };
}
