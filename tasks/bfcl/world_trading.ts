/**
 * The generator's TradingBot world: a few of BFCL's stocks (its default table's prices and averages), an account
 * with a balance, orders, a watch list and, mostly, a logged-in user. Long: 20-29 orders, a 20-39 entry transaction
 * history and the whole stock table in the watch list (the class adds BFCL's long lists to the results). The view
 * tracks orders, watch list, balance and login.
 */
import type { Rng } from "../../src/util/random.ts";
import { pyFloat } from "./classes/py.ts";
import type { PyValue } from "./literal.ts";
import { call, digits, PEOPLE, pick, resultField, type Template, type World } from "./world_kit.ts";

/** BFCL's default stocks: symbol, price, percent change, volume, MA(5), MA(20). */
const STOCKS: [string, number, number, number, number, number][] = [
  ["AAPL", 227.16, 0.17, 2.552, 227.11, 227.09],
  ["GOOG", 2840.34, 0.24, 1.123, 2835.67, 2842.15],
  ["TSLA", 667.92, -0.12, 1.654, 671.15, 668.2],
  ["MSFT", 310.23, 0.09, 3.234, 309.88, 310.11],
  ["NVDA", 220.34, 0.34, 1.234, 220.45, 220.67],
  ["ALPH", 1320.45, -0.08, 1.567, 1321.12, 1325.78],
  ["OMEG", 457.23, 0.12, 2.345, 456.78, 458.12],
  ["QUAS", 725.89, -0.03, 1.789, 726.45, 728.01],
  ["NEPT", 88.34, 0.19, 0.654, 88.21, 88.67],
  ["SYNX", 345.67, 0.11, 2.112, 345.34, 346.12],
  ["ZETA", 22.09, -0.05, 0.789, 22.12, 22.34],
];

/** Company names BFCL's get_symbol_by_name knows. */
const COMPANIES = ["Apple", "Google", "Tesla", "Microsoft", "Nvidia", "Zeta Corp", "Alpha Tech", "Omega Industries"];

const money = (x: number) => x.toFixed(2);

/** TradingBot: quotes, orders, the watch list, deposits and withdrawals, account and history. */
export function tradingWorld(rng: Rng, long = false): World {
  const chosen = rng.shuffle([...STOCKS]).slice(0, long ? STOCKS.length : 5 + rng.int(4));
  const price = new Map(chosen.map((s) => [s[0], s[1]]));
  const symbols = [...price.keys()];
  const orders = new Map<number, { symbol: string; status: string }>();
  let counter = 12000 + rng.int(900);
  const ordersConfig: Record<string, unknown> = {};
  for (let i = 0, n = long ? 20 + rng.int(10) : 1 + rng.int(3); i < n; i++) {
    const symbol = pick(rng, symbols);
    const status = pick(rng, ["Completed", "Pending", "Open"]);
    const order = {
      id: counter,
      order_type: pick(rng, ["Buy", "Sell"]),
      symbol,
      price: Number((price.get(symbol)! * (0.9 + 0.2 * rng.float())).toFixed(2)),
      amount: 1 + rng.int(50),
      status,
    };
    ordersConfig[String(counter)] = order;
    orders.set(counter++, { symbol, status });
  }
  let balance = 5000 + rng.int(20000) + (1 + rng.int(99)) / 100;
  const watch = long ? [...symbols] : rng.shuffle([...symbols]).slice(0, 1 + rng.int(2));
  const history = [];
  for (let i = 0, n = long ? 20 + rng.int(20) : 0; i < n; i++) {
    const day = String(1 + rng.int(28)).padStart(2, "0"), month = String(1 + rng.int(8)).padStart(2, "0");
    history.push({
      type: pick(rng, ["deposit", "withdrawal"]),
      amount: 100 * (1 + rng.int(50)),
      timestamp: `2024-${month}-${day} ${10 + rng.int(10)}:${10 + rng.int(50)}:${10 + rng.int(50)}`,
    });
  }
  let loggedIn = rng.float() < 0.8;
  const marketOpen = rng.float() < 0.5;
  const user = pick(rng, PEOPLE), password = `${user}${digits(rng, 4)}`;
  const config = {
    orders: ordersConfig,
    account_info: { account_id: Number(digits(rng, 5)), balance, binding_card: Number(digits(rng, 16)) },
    authenticated: loggedIn,
    market_status: marketOpen ? "Open" : "Closed",
    order_counter: counter,
    stocks: Object.fromEntries(
      chosen.map((
        [s, p, c, v, m5, m20],
      ) => [s, { price: p, percent_change: c, volume: v, "MA(5)": m5, "MA(20)": m20 }]),
    ),
    watch_list: [...watch],
    transaction_history: history,
  };
  const some = (rng: Rng) => rng.shuffle([...symbols]).slice(0, 2 + rng.int(2));
  const requests: Template[] = [
    () => {
      if (loggedIn) return undefined;
      return {
        ask: `Log me in to my trading account: username '${user}', password '${password}'.`,
        calls: [call("trading_login", { username: user, password })],
        vague: { ask: `Log me in to my trading account as '${user}'.`, clarify: `The password is '${password}'.` },
        commit: () => void (loggedIn = true),
      };
    },
    (rng) => {
      const s = pick(rng, symbols);
      return { ask: `What are the latest figures for ${s}?`, calls: [call("get_stock_info", { symbol: s })] };
    },
    (rng) => {
      const name = pick(rng, COMPANIES);
      return { ask: `What is the ticker symbol of ${name}?`, calls: [call("get_symbol_by_name", { name })] };
    },
    (rng) => {
      const s = pick(rng, symbols), type = pick(rng, ["Buy", "Sell"]), amount = 1 + rng.int(20);
      const p = price.get(s)!;
      const args: Record<string, PyValue> = { order_type: type, symbol: s, price: pyFloat(p), amount };
      const word = type.toLowerCase();
      return {
        ask: `Place a ${word} order for ${amount} shares of ${s} at $${p} per share.`,
        calls: [call("place_order", args)],
        vague: { ask: `Place a ${word} order for ${s} at $${p} per share.`, clarify: `Make it ${amount} shares.` },
        commit: (results) => {
          const id = resultField(results[0], "order_id");
          if (typeof id === "number") orders.set(id, { symbol: s, status: "Open" });
        },
      };
    },
    (rng) => {
      const open = [...orders].filter(([, o]) => o.status !== "Completed" && o.status !== "Cancelled");
      const [id, o] = pick(rng, open) ?? [];
      if (id === undefined) return undefined;
      return {
        ask: `Cancel my order ${id}.`,
        calls: [call("cancel_order", { order_id: id })],
        vague: { ask: `Cancel my open order for ${o!.symbol}.`, clarify: `It is order ${id}.` },
        commit: () => void (o!.status = "Cancelled"),
      };
    },
    (rng) => {
      const id = pick(rng, [...orders.keys()]);
      if (id === undefined) return undefined;
      return { ask: `Show me the details of order ${id}.`, calls: [call("get_order_details", { order_id: id })] };
    },
    (rng) => {
      const s = pick(rng, symbols.filter((x) => !watch.includes(x)));
      if (!s) return undefined;
      return {
        ask: `Add ${s} to my watchlist.`,
        calls: [call("add_to_watchlist", { stock: s })],
        commit: () => void watch.push(s),
      };
    },
    (rng) => {
      const s = pick(rng, watch);
      if (!s) return undefined;
      return {
        ask: `Take ${s} off my watchlist.`,
        calls: [call("remove_stock_from_watchlist", { symbol: s })],
        vague: { ask: "Take one of the stocks off my watchlist.", clarify: `Remove ${s}.` },
        commit: () => void watch.splice(watch.indexOf(s), 1),
      };
    },
    () => ({ ask: "Show me my watchlist.", calls: [call("get_watchlist", {})] }),
    (rng) => {
      const amount = 100 * (1 + rng.int(50));
      return {
        ask: `Deposit $${amount} into my trading account.`,
        calls: [call("fund_account", { amount })],
        vague: { ask: "Put some money into my trading account.", clarify: `Deposit $${amount}.` },
        commit: () => void (balance += amount),
      };
    },
    (rng) => {
      const amount = 100 * (1 + rng.int(20));
      if (!marketOpen || amount > balance) return undefined;
      return {
        ask: `Withdraw $${amount} from my trading account.`,
        calls: [call("withdraw_funds", { amount })],
        commit: () => void (balance -= amount),
      };
    },
    () => ({ ask: "Show me my account information.", calls: [call("get_account_info", {})] }),
    (rng) => {
      const sector = pick(rng, ["Technology", "Automobile"]);
      return {
        ask: `Which stocks are available in the ${sector} sector?`,
        calls: [call("get_available_stocks", { sector })],
      };
    },
    (rng) => {
      const stocks = some(rng), threshold = pick(rng, [0.05, 0.1, 0.15, 0.2]);
      return {
        ask: `Tell me whether any of ${stocks.join(", ")} moved by at least ${threshold} percent.`,
        calls: [call("notify_price_change", { stocks, threshold: pyFloat(threshold) })],
      };
    },
    (rng) => {
      const stocks = some(rng), lo = 10 * rng.int(30), hi = lo + 100 * (1 + rng.int(20));
      return {
        ask: `Which of ${stocks.join(", ")} trade between $${money(lo)} and $${money(hi)}?`,
        calls: [call("filter_stocks_by_price", { stocks, min_price: pyFloat(lo), max_price: pyFloat(hi) })],
      };
    },
    () => ({ ask: "Show me my transaction history.", calls: [call("get_transaction_history", {})] }),
    () => ({ ask: "List the ids of all my orders.", calls: [call("get_order_history", {})] }),
  ];
  return { className: "TradingBot", config, request: (rng) => pick(rng, requests)(rng) };
}
