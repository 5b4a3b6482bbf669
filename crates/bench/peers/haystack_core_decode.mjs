// Decodes a Haystack file with the independent JavaScript decoder haystack-core and prints
// the grid as canonical JSON v4 (Hayson). The format comes from the extension.
//   node haystack_core_decode.mjs FILE            -> Hayson JSON on stdout
//   node haystack_core_decode.mjs FILE --time N   -> {"format", "rows", "ms": [N decode times]}
// Run with NODE_PATH pointing at the node_modules of scripts/peers.sh (.peers/node).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_PATH ? `${process.env.NODE_PATH}/` : import.meta.url);
const { ZincReader, HGrid, TrioReader } = require('haystack-core');

const [file, flag, count] = process.argv.slice(2);
const text = readFileSync(file, 'utf8');
const format = file.split('.').pop();
const decode = {
  zinc: () => ZincReader.readValue(text),
  json: () => HGrid.make(JSON.parse(text)),
  trio: () => new TrioReader(text).readGrid(),
}[format];
if (!decode) {
  console.error(`unknown format of ${file}: use .zinc, .json or .trio`);
  process.exit(2);
}
if (flag === '--time') {
  const ms = [];
  let grid;
  for (let i = 0; i < Number(count || 5); i++) {
    const t0 = performance.now();
    grid = decode();
    ms.push(performance.now() - t0);
  }
  console.log(JSON.stringify({ format, rows: grid.length, ms }));
} else {
  console.log(JSON.stringify(decode().toJSON()));
}
