// Decodes a Haystack file with the independent JavaScript decoder haystack-core and prints
// the grid as canonical JSON v4 (Hayson). The format comes from the extension.
//   node haystack_core_decode.mjs FILE            -> Hayson JSON on stdout
//   node haystack_core_decode.mjs FILE --time N   -> {"format", "rows", "ms": [N decode times]}
// Run with NODE_PATH pointing at the node_modules of scripts/peers.sh (.peers/node).
//
// What is timed is the same for every decoder of the benchmark: from the file's bytes in
// memory to a grid whose every value is decoded. haystack-core decodes a Hayson grid lazily
// (HGrid keeps the JSON.parse result and makes a row's values only when they are read), so
// the timed JSON decode reads every row's values (`toObj`). The Zinc and Trio readers make
// every value as they read, so they are timed as they are.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_PATH ? `${process.env.NODE_PATH}/` : import.meta.url);
const { ZincReader, HGrid, TrioReader } = require('haystack-core');

const [file, flag, count] = process.argv.slice(2);
const bytes = readFileSync(file);
const format = file.split('.').pop();
const parse = {
  zinc: (text) => ZincReader.readValue(text),
  json: (text) => HGrid.make(JSON.parse(text)),
  trio: (text) => new TrioReader(text).readGrid(),
}[format];
const decode = parse && (() => parse(bytes.toString('utf8')));
// What is timed: for JSON, the lazily kept rows are read too.
const timed = format === 'json' ? () => decodeAll(decode()) : decode;

// Reads every value of a decoded grid, so that lazily kept JSON is turned into values;
// returns the grid.
function decodeAll(value) {
  if (value === null || value === undefined || typeof value !== 'object') {
    return value;
  }
  if (typeof value.getRows === 'function') {
    decodeAll(value.meta);
    for (const column of value.getColumns()) {
      decodeAll(column.meta);
    }
    for (const row of value.getRows()) {
      decodeAll(row);
    }
  } else if (typeof value.toObj === 'function') {
    for (const cell of Object.values(value.toObj())) {
      decodeAll(cell);
    }
  } else if (typeof value.toArray === 'function') {
    for (const item of value.toArray()) {
      decodeAll(item);
    }
  }
  return value;
}
if (!decode) {
  console.error(`unknown format of ${file}: use .zinc, .json or .trio`);
  process.exit(2);
}
if (flag === '--time') {
  const ms = [];
  let grid;
  for (let i = 0; i < Number(count || 5); i++) {
    const t0 = performance.now();
    grid = timed();
    ms.push(performance.now() - t0);
  }
  console.log(JSON.stringify({ format, rows: grid.length, ms }));
} else {
  console.log(JSON.stringify(decode().toJSON()));
}
