// Module resolve hook: "/sdk/rcadia-agent.js" and friends resolve like horst
// serves them (see served-paths.js). Registered with node:module register().
import { fileUrlForPath } from "./served-paths.js";

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith("/") && !specifier.startsWith("//")) {
    const url = fileUrlForPath(specifier);
    if (url) {
      const query = specifier.includes("?") ? specifier.slice(specifier.indexOf("?")) : "";
      return { url: url + query, shortCircuit: true, format: "module" };
    }
  }
  return nextResolve(specifier, context);
}
