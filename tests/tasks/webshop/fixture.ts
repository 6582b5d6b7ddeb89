// A small catalogue in WebShop's published layout (items_shuffle, items_ins_v2), for page, episode and server tests.
import type { RawAttributes, RawProduct } from "../../../tasks/webshop/catalog.ts";
import { loadCatalog } from "../../../tasks/webshop/catalog.ts";
import { buildWorld, type WebShopWorld } from "../../../tasks/webshop/world.ts";

const product = (asin: string, o: Partial<RawProduct>): RawProduct => ({
  asin,
  name: "",
  full_description: "",
  small_description: [],
  pricing: "$10.00",
  images: [`https://example.invalid/${asin}.jpg`],
  product_category: "Clothing, Shoes & Jewelry › Men › Shoes",
  query: "running shoes",
  category: "fashion",
  customization_options: {},
  ...o,
});

/** Raw products: a shoe with two option groups, a second shoe, a ranged-price sock, a watch, and a product whose asin
 * upstream skips (longer than 10 characters). */
export const RAW: RawProduct[] = [
  product("B00SHOE001", {
    name: "Trail Runner Men's Running Shoes",
    full_description: "Light running shoes for trail and road.",
    small_description: ["Breathable mesh upper", "", "Rubber sole"],
    pricing: "$45.99",
    customization_options: {
      Color: [{ value: "Black/White" }, { value: "Navy Blue" }],
      Size: [{ value: " 9 " }, { value: "10" }],
    },
  }),
  product("B00SHOE002", {
    name: "City Walker Casual Shoes",
    full_description: "Comfortable shoes for the city.",
    small_description: "Leather upper",
    pricing: "$60.00",
    query: "walking shoes",
  }),
  product("B00SOCK003", {
    name: "Cotton Running Socks 6 Pack",
    full_description: "Soft socks for running.",
    small_description: ["Cotton blend"],
    pricing: "$12.00 - $18.50",
    query: "socks",
    product_category: "Clothing, Shoes & Jewelry › Men › Socks",
  }),
  product("B00WATCH04", {
    name: "Steel Sport Watch",
    full_description: "A water resistant watch.",
    small_description: ["Water resistant"],
    pricing: "",
    query: "watches",
    category: "electronics",
    product_category: "Electronics › Wearable Technology › Watches",
  }),
  product("B00TOOLONG99", { name: "Skipped" }),
];

/** The attribute file: synthetic instructions for the first shoe and the socks. */
export const ATTRS: Record<string, RawAttributes> = {
  B00SHOE001: {
    attributes: ["rubber sole", "breathable mesh"],
    instruction: "Find me men's running shoes with rubber sole",
    instruction_attributes: ["rubber sole"],
  },
  B00SHOE002: { attributes: ["leather upper"] },
  B00SOCK003: {
    attributes: ["cotton blend"],
    instruction: "Find me cotton running socks",
    instruction_attributes: ["cotton blend"],
  },
  B00WATCH04: { attributes: [] },
};

/** The fixture's world with synthetic goals (4 shoe goals, one per colour and size, and 1 sock goal). */
export function fixtureWorld(): WebShopWorld {
  return buildWorld(loadCatalog(RAW, ATTRS), "synthetic");
}
