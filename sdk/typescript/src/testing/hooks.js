// Module resolution hook (see register.js).
const HOST = new URL("./host.js", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier.startsWith("wharf:plugin/host")) return { url: HOST, shortCircuit: true };
  return next(specifier, context);
}
