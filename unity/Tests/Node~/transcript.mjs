// Prints the transcript of a sequence as JSON lines, to look at a conformance failure:
//   node unity/Tests/Node~/transcript.mjs unity/Tests/Node~/sequences/chess-series.jsonl js
//   node unity/Tests/Node~/transcript.mjs unity/Tests/Node~/sequences/chess-series.jsonl unity
// "js" plays it into the JS SDK, "unity" into the jslib + C# core (builds with Mono unless
// RCADIA_UNITY_BUILD names a build). `generated SEED SESSIONS` instead of a file plays the
// generated sessions of conformance.test.mjs.

import { readFileSync } from "node:fs";
import { driverPath } from "./support/mono-build.mjs";
import { generateSequence, windowSequence } from "./support/generate.mjs";
import { jsTranscript, parseSequence, unityTranscript } from "./support/transcripts.mjs";

const args = process.argv.slice(2);
let steps;
let which;
if (args[0] === "generated" && args.length === 4) {
  steps = generateSequence(Number(args[1]), Number(args[2]));
  which = args[3];
} else if (args[0] === "window" && args.length === 2) {
  steps = windowSequence();
  which = args[1];
} else if (args.length === 2) {
  steps = parseSequence(readFileSync(args[0], "utf8"));
  which = args[1];
} else {
  console.error("usage: transcript.mjs (SEQUENCE.jsonl | generated SEED SESSIONS | window) (js | unity)");
  process.exit(2);
}
if (which !== "js" && which !== "unity") {
  console.error(`transcript.mjs: "${which}" is neither js nor unity`);
  process.exit(2);
}
const transcript = which === "js" ? jsTranscript(steps) : await unityTranscript(steps, driverPath());
for (const entry of transcript) console.log(JSON.stringify(entry));
