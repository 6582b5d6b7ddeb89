/**
 * `node:http` in the studio page (the page's import map names this module for it): the environment server's listener
 * imports it, and the page plays its game in-process instead of listening. Creating a server throws.
 */
function createServer(): never {
  throw new Error("node:http's createServer is not available in the studio page: it plays the game in-process");
}

export default { createServer };
