/**
 * TradingBot against a transcript of every method, errors included, with the exact texts gorilla's Python class
 * gives: the default orders beside the scenario, float prices (22.0), `.2f` funds messages, transaction timestamps
 * from random.Random(1053520), date filters and strptime's error; plus the long-context watch list (which ends in
 * Python's Ellipsis, so BFCL writes it through str()).
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { parsePyJson, PyFloat } from "../../../tasks/bfcl/classes/py.ts";
import { playTranscript, runCall, type Step } from "./transcript.ts";

const F = (x: number) => new PyFloat(x);

const SCENARIO_JSON = `{"account_info": {"account_id": 12345, "balance": 1000.0, "binding_card": 1974202140965533},
  "authenticated": false, "market_status": "Open", "order_counter": 12446,
  "stocks": {"AAPL": {"price": 227.16, "percent_change": 0.17, "volume": 2.552, "MA(5)": 227.11, "MA(20)": 227.09},
             "TSLA": {"price": 667.92, "percent_change": -0.12, "volume": 1.654, "MA(5)": 671.15, "MA(20)": 668.2},
             "ZETA": {"price": 22.0, "percent_change": -0.5, "volume": 0.789, "MA(5)": 22.12, "MA(20)": 22.34}},
  "watch_list": ["AAPL"], "transaction_history": []}`;

Deno.test("TradingBot: every method and its error texts as BFCL's Python gives them", () => {
  const api = newInstance("TradingBot");
  api.loadScenario(parsePyJson(SCENARIO_JSON) as Record<string, unknown>);
  const steps: Step[] = [
    ["get_current_time", {}, '{"current_time": "10:30 AM"}'],
    ["get_symbol_by_name", { "name": "Tesla" }, '{"symbol": "TSLA"}'],
    ["get_symbol_by_name", { "name": "Acme" }, '{"symbol": "Stock not found"}'],
    [
      "get_stock_info",
      { "symbol": "ZETA" },
      '{"price": 22.0, "percent_change": -0.5, "volume": 0.789, "MA(5)": 22.12, "MA(20)": 22.34}',
    ],
    ["get_stock_info", { "symbol": "XXX" }, '{"error": "Stock with symbol \'XXX\' not found."}'],
    [
      "place_order",
      { "order_type": "Buy", "symbol": "AAPL", "price": 227.16, "amount": 1 },
      '{"error": "User not authenticated. Please log in to place an order."}',
    ],
    ["get_account_info", {}, '{"error": "User not authenticated. Please log in to view account information."}'],
    ["get_watchlist", {}, "['Error: User not authenticated. Please log in to view the watchlist.']"],
    ["get_order_history", {}, "[{'error': 'User not authenticated. Please log in to view order history.'}]"],
    [
      "get_transaction_history",
      {},
      "[{'error': 'User not authenticated. Please log in to view transaction history.'}]",
    ],
    ["fund_account", { "amount": 5 }, '{"error": "User not authenticated. Please log in to fund the account."}'],
    ["withdraw_funds", { "amount": 5 }, '{"error": "User not authenticated. Please log in to make a transaction."}'],
    [
      "remove_stock_from_watchlist",
      { "symbol": "AAPL" },
      '{"error": "User not authenticated. Please log in to modify the watchlist."}',
    ],
    ["trading_get_login_status", {}, '{"status": false}'],
    ["trading_logout", {}, '{"status": "No user is currently logged in"}'],
    ["trading_login", { "username": "u", "password": "p" }, '{"status": "Logged in successfully"}'],
    ["trading_login", { "username": "u", "password": "p" }, '{"status": "Already logged in"}'],
    ["trading_get_login_status", {}, '{"status": true}'],
    [
      "place_order",
      { "order_type": "Buy", "symbol": "AAPL", "price": 227.16, "amount": 10 },
      '{"error": "Insufficient funds: required $2271.60 but only $1000.00 available."}',
    ],
    [
      "place_order",
      { "order_type": "Buy", "symbol": "NOPE", "price": 1, "amount": 1 },
      '{"error": "Invalid stock symbol: NOPE"}',
    ],
    [
      "place_order",
      { "order_type": "Sell", "symbol": "TSLA", "price": 0, "amount": 1 },
      '{"error": "Price and amount must be positive values."}',
    ],
    [
      "place_order",
      { "order_type": "Buy", "symbol": "ZETA", "price": 22, "amount": 5 },
      '{"order_id": 12446, "order_type": "Buy", "status": "Pending", "price": 22.0, "amount": 5}',
    ],
    [
      "place_order",
      { "order_type": "Sell", "symbol": "TSLA", "price": 700.5, "amount": 2 },
      '{"order_id": 12447, "order_type": "Sell", "status": "Pending", "price": 700.5, "amount": 2}',
    ],
    [
      "get_order_details",
      { "order_id": 12446 },
      '{"id": 12446, "order_type": "Buy", "symbol": "ZETA", "price": 22.0, "amount": 5, "status": "Open"}',
    ],
    [
      "get_order_details",
      { "order_id": 1 },
      '{"error": "Order with ID 1 not found.Here is the list of orders_id: [12345, 12446, 12447]"}',
    ],
    ["cancel_order", { "order_id": 12447 }, '{"order_id": 12447, "status": "Cancelled"}'],
    ["cancel_order", { "order_id": 99 }, '{"error": "Order with ID 99 not found."}'],
    ["get_order_history", {}, '{"history": [12345, 12446, 12447]}'],
    ["fund_account", { "amount": 250.5 }, '{"status": "Account funded successfully", "new_balance": 1250.5}'],
    ["fund_account", { "amount": -1 }, '{"error": "Funding amount must be positive."}'],
    ["withdraw_funds", { "amount": 100 }, '{"status": "Withdrawal successful", "new_balance": 1150.5}'],
    ["withdraw_funds", { "amount": F(1000000000) }, '{"error": "Insufficient funds for withdrawal."}'],
    ["withdraw_funds", { "amount": 0 }, '{"error": "Transaction amount must be positive."}'],
    ["get_account_info", {}, '{"account_id": 12345, "balance": 1150.5, "binding_card": 1974202140965533}'],
    [
      "get_transaction_history",
      { "start_date": "2024-09-01", "end_date": "2024-09-02" },
      '{"transaction_history": [{"type": "withdrawal", "amount": 100, "timestamp": "2024-09-01 12:26:34"}]}',
    ],
    [
      "get_transaction_history",
      { "start_date": "2024-09-02" },
      '{"transaction_history": [{"type": "deposit", "amount": 250.5, "timestamp": "2024-09-02 05:40:15"}]}',
    ],
    [
      "get_transaction_history",
      { "start_date": "09/01/2024" },
      "Error during execution: time data '09/01/2024' does not match format '%Y-%m-%d'",
    ],
    ["add_to_watchlist", { "stock": "TSLA" }, '{"watchlist": ["AAPL", "TSLA"]}'],
    ["add_to_watchlist", { "stock": "MSFT" }, '{"watchlist": ["AAPL", "TSLA"]}'],
    ["get_watchlist", {}, '{"watchlist": ["AAPL", "TSLA"]}'],
    [
      "remove_stock_from_watchlist",
      { "symbol": "AAPL" },
      '{"status": "Stock AAPL removed from watchlist successfully."}',
    ],
    ["remove_stock_from_watchlist", { "symbol": "GOOG" }, '{"error": "Stock GOOG not found in watchlist."}'],
    ["get_available_stocks", { "sector": "Technology" }, '{"stock_list": ["AAPL", "GOOG", "MSFT", "NVDA"]}'],
    ["get_available_stocks", { "sector": "Food" }, '{"stock_list": []}'],
    [
      "filter_stocks_by_price",
      { "stocks": ["AAPL", "TSLA", "ZETA", "MISSING"], "min_price": 0, "max_price": 300 },
      '{"filtered_stocks": ["AAPL", "ZETA", "MISSING"]}',
    ],
    [
      "notify_price_change",
      { "stocks": ["AAPL", "ZETA", "TSLA"], "threshold": 0.15 },
      '{"notification": "Stocks AAPL, ZETA have significant price changes."}',
    ],
    [
      "notify_price_change",
      { "stocks": ["AAPL"], "threshold": 5 },
      '{"notification": "No significant price changes in the selected stocks."}',
    ],
    [
      "place_order",
      { "order_type": "Buy", "symbol": "AAPL", "price": "high", "amount": 1 },
      "Error during execution: '<=' not supported between instances of 'str' and 'int'",
    ],
    ["trading_logout", {}, '{"status": "Logged out successfully"}'],
    ["get_watchlist", {}, "['Error: User not authenticated. Please log in to view the watchlist.']"],
    [
      "get_transaction_history",
      {},
      "[{'error': 'User not authenticated. Please log in to view transaction history.'}]",
    ],
    [
      "place_order",
      { "order_type": "Buy" },
      "Error during execution: TradingBot.place_order() missing 3 required positional arguments: 'symbol', 'price', and 'amount'",
    ],
  ];
  playTranscript(api, steps);
  const state = api.state() as Record<string, unknown>;
  assert.equal(state.order_counter, 12448);
  assert.deepEqual(state.account_info, { account_id: 12345, balance: 1150.5, binding_card: 1974202140965533 });
  assert.deepEqual(state.watch_list, ["TSLA"]);
  assert.equal((state.transaction_history as unknown[]).length, 2);
});

Deno.test("TradingBot: long context lists, Ellipsis and order metadata", () => {
  const api = newInstance("TradingBot");
  api.loadScenario(parsePyJson(SCENARIO_JSON) as Record<string, unknown>, true);
  runCall(api, "trading_login", { username: "u", password: "p" });
  // python: str(TradingBot(long_context).get_watchlist()) has 7006 characters
  const watch = runCall(api, "get_watchlist", {});
  assert.equal(watch.length, 7006);
  assert.ok(watch.startsWith("['AAPL', 'JHGUN', 'LMAT'") && watch.endsWith("'ZRFRE', Ellipsis]"));
  const order = runCall(api, "get_order_details", { order_id: 12345 });
  assert.ok(order.startsWith('{"id": 12345, "order_type": "Buy", "symbol": "AAPL", "price": 210.65'));
  assert.ok(order.includes('"metadata": {"company_overview": "\\n    AAPL is one of the most influential'));
  assert.equal(runCall(api, "get_transaction_history", {}).length, 84370);
});
