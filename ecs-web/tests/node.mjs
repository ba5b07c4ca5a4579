// The wasm side of the web checks, in Node: loads a module of the page and
// prints, in the lines `fireworks-native` prints, the scripted run's
// checksum (replayed through the exports the page's mouse and keyboard
// use), the digest of the pass over every layer, and the figures' timings.
//
//   node ecs-web/tests/node.mjs target/web/site/fireworks.wasm checksum [FRAMES]
//   node ecs-web/tests/node.mjs target/web/checks.wasm layers      (the `checks` feature)
//   node ecs-web/tests/node.mjs target/web/site/fireworks.wasm figures
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [path, command, arg] = process.argv.slice(2);
const { instance } = await WebAssembly.instantiate(readFileSync(path), {});
const fw = instance.exports;
const hex = (n) => BigInt.asUintN(64, n).toString(16).padStart(16, '0');

if (command === 'checksum') {
  const frames = arg ? Number(arg) : fw.fireworks_script_frames();
  const script = [];
  for (let i = 0; i < fw.fireworks_script_len(); i++) {
    script.push([0, 1, 2, 3].map((field) => fw.fireworks_script_field(i, field)));
  }
  fw.fireworks_reset();
  for (let frame = 0; frame < frames; frame++) {
    for (const [at, key, px, py] of script) {
      if (at === frame) {
        if (key) fw.fireworks_key(key); else fw.fireworks_click(px, py);
      }
    }
    fw.fireworks_frame_fixed();
  }
  console.log(`checksum ${frames} ${hex(fw.fireworks_checksum())}`);
} else if (command === 'layers') {
  console.log(`layers ${hex(fw.layers_digest())}`);
  const names = ['saves', 'prefabs', 'hierarchy', 'observers', 'change_tracking', 'schedule'];
  for (let i = 0; i < fw.layers_len(); i++) console.log(`  ${names[i] ?? i} ${hex(fw.layers_check(i))}`);
} else if (command === 'figures') {
  // The same runs as the native binary: median of 15 runs of many calls.
  const median = (runs, reps, f) => {
    const times = [];
    for (let r = 0; r < runs; r++) {
      const start = performance.now();
      for (let i = 0; i < reps; i++) f();
      times.push((performance.now() - start) * 1000 / reps);
    }
    times.sort((a, b) => a - b);
    return times[times.length >> 1];
  };
  fw.figures_setup();
  for (let i = 0; i < 50; i++) { fw.figures_query(); fw.figures_schedule(); }
  console.log('entities 10000');
  console.log(`query_us ${median(15, 200, fw.figures_query).toFixed(2)}`);
  console.log(`schedule_us ${median(15, 100, fw.figures_schedule).toFixed(2)}`);
} else {
  console.error('usage: node.mjs MODULE checksum [FRAMES] | layers | figures');
  process.exit(2);
}
