/**
 * The kinds of product Crucible's generated WebShop catalogue sells, across WebShop's five categories (beauty, food,
 * fashion, furniture, electronics): for each, the search query and category path a scraped product of that kind
 * carries, the plural noun instructions use, the attributes its products draw from, its option groups and price
 * range. Written for Crucible; no WebShop data.
 */

/** One kind of product. */
export interface ProductKind {
  category: "beauty" | "food" | "fashion" | "furniture" | "electronics";
  /** WebShop's `query` field: the search phrase the product was scraped under. */
  query: string;
  /** WebShop's `product_category`: levels joined by ` › `. */
  path: string;
  /** The noun in titles (title case) and instructions (lower case, plural). */
  title: string;
  plural: string;
  /** Attributes a product of this kind may have (3-5 are drawn), as WebShop's attribute file writes them. */
  attributes: string[];
  /** Option groups: name and the values a product draws 2-4 of. */
  options: [string, string[]][];
  /** Price range in dollars. */
  price: [number, number];
}

const COLORS = ["black", "white", "navy blue", "heather grey", "olive green", "burgundy", "light pink", "khaki"];
const SIZES = ["small", "medium", "large", "x-large", "xx-large"];

/** Every kind, in a fixed order (the generator walks it). */
export const KINDS: ProductKind[] = [
  {
    category: "fashion",
    query: "yoga pants",
    path: "Clothing, Shoes & Jewelry › Women › Clothing › Active › Active Pants",
    title: "Yoga Pants",
    plural: "yoga pants",
    attributes: [
      "high waist",
      "tummy control",
      "machine wash",
      "quick drying",
      "elastic waistband",
      "wide leg",
      "polyester spandex",
      "side pockets",
    ],
    options: [["color", COLORS], ["size", SIZES]],
    price: [15, 45],
  },
  {
    category: "fashion",
    query: "running shoes",
    path: "Clothing, Shoes & Jewelry › Men › Shoes › Athletic › Running",
    title: "Running Shoes",
    plural: "running shoes",
    attributes: ["rubber sole", "non slip", "breathable mesh", "lightweight", "lace up", "arch support", "memory foam"],
    options: [["color", COLORS], ["size", ["7", "8", "9", "10", "11", "12"]]],
    price: [30, 90],
  },
  {
    category: "fashion",
    query: "t-shirts",
    path: "Clothing, Shoes & Jewelry › Men › Clothing › Shirts › T-Shirts",
    title: "T-Shirt",
    plural: "t-shirts",
    attributes: [
      "short sleeve",
      "cotton blend",
      "classic fit",
      "machine wash",
      "crew neck",
      "moisture wicking",
      "relaxed fit",
    ],
    options: [["color", COLORS], ["size", SIZES]],
    price: [9, 30],
  },
  {
    category: "fashion",
    query: "winter jackets",
    path: "Clothing, Shoes & Jewelry › Women › Clothing › Coats, Jackets & Vests",
    title: "Winter Jacket",
    plural: "winter jackets",
    attributes: [
      "water resistant",
      "zipper closure",
      "faux fur",
      "detachable hood",
      "long sleeve",
      "fleece lined",
      "windproof",
    ],
    options: [["color", COLORS], ["size", SIZES]],
    price: [40, 130],
  },
  {
    category: "beauty",
    query: "body lotion",
    path: "Beauty & Personal Care › Skin Care › Body › Moisturizers › Lotions",
    title: "Body Lotion",
    plural: "body lotions",
    attributes: [
      "shea butter",
      "paraben free",
      "sensitive skin",
      "long lasting",
      "natural ingredients",
      "fragrance free",
      "cruelty free",
    ],
    options: [["scent", ["lavender", "coconut", "unscented", "vanilla", "cucumber"]], ["size", [
      "8 fl oz",
      "16 fl oz",
      "8 fl oz (pack of 2)",
    ]]],
    price: [6, 25],
  },
  {
    category: "beauty",
    query: "shampoo",
    path: "Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos",
    title: "Shampoo",
    plural: "shampoos",
    attributes: [
      "sulfate free",
      "tea tree",
      "dry hair",
      "argan oil",
      "color treated",
      "hair growth",
      "natural ingredients",
    ],
    options: [["size", ["12 fl oz", "16.9 fl oz", "33.8 fl oz"]]],
    price: [7, 30],
  },
  {
    category: "beauty",
    query: "lipstick",
    path: "Beauty & Personal Care › Makeup › Lips › Lipstick",
    title: "Lipstick",
    plural: "lipsticks",
    attributes: ["long lasting", "matte finish", "cruelty free", "vegan", "highly pigmented", "paraben free"],
    options: [["color", ["red", "nude", "pink", "plum", "coral", "berry"]]],
    price: [5, 22],
  },
  {
    category: "beauty",
    query: "hair extensions",
    path: "Beauty & Personal Care › Hair Care › Hair Extensions, Wigs & Accessories › Hair Extensions",
    title: "Hair Extensions",
    plural: "hair extensions",
    attributes: ["natural looking", "clip in", "heat resistant", "human hair", "easy to use", "straight hair"],
    options: [["color", ["light brown", "blonde", "black", "dark brown"]], ["size", ["16 inch", "20 inch", "24 inch"]]],
    price: [18, 70],
  },
  {
    category: "food",
    query: "coffee beans",
    path: "Grocery & Gourmet Food › Beverages › Coffee, Tea & Cocoa › Coffee › Whole Coffee Beans",
    title: "Coffee Beans",
    plural: "coffee beans",
    attributes: ["whole bean", "medium roast", "dark roast", "fair trade", "usda organic", "low acid", "single origin"],
    options: [["flavor name", ["french roast", "colombian", "hazelnut", "vanilla", "breakfast blend"]], ["size", [
      "12 ounce",
      "2 pound",
    ]]],
    price: [8, 35],
  },
  {
    category: "food",
    query: "granola bars",
    path: "Grocery & Gourmet Food › Snack Foods › Bars › Granola Bars",
    title: "Granola Bars",
    plural: "granola bars",
    attributes: ["gluten free", "high protein", "low sugar", "non gmo", "individually wrapped", "kosher certified"],
    options: [["flavor name", ["chocolate chip", "peanut butter", "honey oat", "almond"]], ["size", [
      "pack of 12",
      "pack of 24",
    ]]],
    price: [6, 28],
  },
  {
    category: "food",
    query: "green tea",
    path: "Grocery & Gourmet Food › Beverages › Coffee, Tea & Cocoa › Tea › Green",
    title: "Green Tea",
    plural: "green tea",
    attributes: ["usda organic", "tea bags", "caffeine free", "sugar free", "antioxidant rich", "loose leaf"],
    options: [["flavor name", ["jasmine", "mint", "lemon", "matcha", "ginger"]], ["size", ["20 count", "100 count"]]],
    price: [4, 20],
  },
  {
    category: "food",
    query: "dark chocolate",
    path: "Grocery & Gourmet Food › Candy & Chocolate › Chocolate › Chocolate Bars",
    title: "Dark Chocolate",
    plural: "dark chocolate bars",
    attributes: ["fair trade", "dairy free", "low sugar", "gluten free", "keto friendly", "individually wrapped"],
    options: [["flavor name", ["sea salt", "orange", "mint", "raspberry", "almond"]], ["size", [
      "pack of 4",
      "pack of 12",
    ]]],
    price: [5, 30],
  },
  {
    category: "furniture",
    query: "office chairs",
    path: "Home & Kitchen › Furniture › Home Office Furniture › Home Office Chairs",
    title: "Office Chair",
    plural: "office chairs",
    attributes: [
      "lumbar support",
      "adjustable height",
      "easy assemble",
      "ergonomic design",
      "swivel wheels",
      "pu leather",
      "mesh back",
    ],
    options: [["color", ["black", "grey", "white", "blue", "brown"]]],
    price: [60, 250],
  },
  {
    category: "furniture",
    query: "bookshelves",
    path: "Home & Kitchen › Furniture › Living Room Furniture › Bookcases",
    title: "Bookshelf",
    plural: "bookshelves",
    attributes: ["solid wood", "easy assemble", "storage space", "engineered wood", "living room", "metal frame"],
    options: [["color", ["walnut", "white", "espresso", "natural", "black"]], ["size", ["3 tier", "4 tier", "5 tier"]]],
    price: [35, 180],
  },
  {
    category: "furniture",
    query: "bed frames",
    path: "Home & Kitchen › Furniture › Bedroom Furniture › Beds, Frames & Bases › Bed Frames",
    title: "Bed Frame",
    plural: "bed frames",
    attributes: ["metal frame", "no box spring needed", "storage space", "easy assemble", "heavy duty", "noise free"],
    options: [["size", ["twin", "full", "queen", "king"]]],
    price: [90, 400],
  },
  {
    category: "furniture",
    query: "throw pillow covers",
    path: "Home & Kitchen › Home Décor Products › Decorative Pillows, Inserts & Covers › Throw Pillow Covers",
    title: "Throw Pillow Covers",
    plural: "throw pillow covers",
    attributes: ["machine washable", "hidden zipper", "living room", "super soft", "set of 2", "velvet"],
    options: [["color", COLORS], ["size", ["18 x 18 inch", "20 x 20 inch"]]],
    price: [8, 30],
  },
  {
    category: "electronics",
    query: "wireless earbuds",
    path: "Electronics › Headphones, Earbuds & Accessories › Earbuds",
    title: "Wireless Earbuds",
    plural: "wireless earbuds",
    attributes: [
      "noise cancelling",
      "bluetooth 5.0",
      "long battery life",
      "water resistant",
      "charging case",
      "hands free",
    ],
    options: [["color", ["black", "white", "blue", "rose gold"]]],
    price: [20, 120],
  },
  {
    category: "electronics",
    query: "phone cases",
    path: "Cell Phones & Accessories › Cases, Holsters & Sleeves › Basic Cases",
    title: "Phone Case",
    plural: "phone cases",
    attributes: ["shockproof", "wireless charging", "slim fit", "drop protection", "scratch resistant", "clear back"],
    options: [["color", ["black", "clear", "pink", "navy blue"]], ["style", ["iphone 12", "iphone 13", "galaxy s21"]]],
    price: [7, 25],
  },
  {
    category: "electronics",
    query: "power banks",
    path: "Cell Phones & Accessories › Accessories › Chargers & Power Adapters › Portable Power Banks",
    title: "Power Bank",
    plural: "power banks",
    attributes: ["fast charging", "usb c", "high capacity", "led display", "compact size", "dual output"],
    options: [["color", ["black", "white", "blue"]], ["capacity", ["10000mah", "20000mah", "26800mah"]]],
    price: [15, 60],
  },
  {
    category: "electronics",
    query: "hdmi cables",
    path: "Electronics › Computers & Accessories › Cables & Accessories › Cables & Interconnects › HDMI Cables",
    title: "HDMI Cable",
    plural: "hdmi cables",
    attributes: ["4k ultra hd", "high speed", "gold plated", "braided cable", "ethernet", "easy install"],
    options: [["size", ["3 feet", "6 feet", "10 feet", "15 feet"]]],
    price: [6, 25],
  },
];

/** Made-up brand names (no real brand). */
export const BRANDS: readonly string[] = (
  "Lumora Tarvik Brightwell Nordale Quillon Verano Coralis Zentha Harlow Mirabel " +
  "Oakvane Solvie Pinecrest Ardent Kestrel Velora Junip Maplin Ostara Ruvelle"
).split(" ");

/** Title words before the noun, by category. */
export const TITLE_WORDS: Record<ProductKind["category"], string[]> = {
  fashion: ["Women's", "Men's", "Classic", "Everyday", "Premium", "Athletic"],
  beauty: ["Daily", "Professional", "Gentle", "Premium", "Natural"],
  food: ["Gourmet", "Classic", "Premium", "Family Size", "Artisan"],
  furniture: ["Modern", "Classic", "Industrial", "Compact", "Home"],
  electronics: ["Pro", "Ultra", "Smart", "Compact", "Premium"],
};
