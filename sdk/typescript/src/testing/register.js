// `node --import wharf-sdk/testing`: resolves the WIT import `wharf:plugin/host@0.1.0`
// to the stand-in in ./host.js, so a plugin's module loads and runs under Node.js.
import { register } from "node:module";

register(new URL("./hooks.js", import.meta.url));
