// A stand-in for the browser window: enough of postMessage and the "message"
// event for the SDK and the bridge to be driven from node tests.

/** @param {{ onPost?: (message: any) => void }} [opts] onPost sees every message the page posts to its parent */
export function makeFakeWindow({ onPost } = {}) {
  const sent = [];
  const listeners = new Set();
  const parent = {
    postMessage(message, targetOrigin) {
      // Real postMessage structured-clones; a JSON round trip catches payloads
      // that would not survive it (functions) and detaches test references.
      const copy = JSON.parse(JSON.stringify(message));
      sent.push({ message: copy, targetOrigin });
      if (onPost) onPost(copy);
    },
  };
  return {
    parent,
    sent,
    addEventListener(type, fn) { if (type === "message") listeners.add(fn); },
    removeEventListener(type, fn) { if (type === "message") listeners.delete(fn); },
    /** Deliver a message as if `source` posted it (the parent by default). */
    dispatch(data, source = parent) {
      for (const fn of [...listeners]) fn({ data, source, origin: "https://host.example" });
    },
    listenerCount() { return listeners.size; },
    /** Messages of one type the game sent to its parent, in order. */
    sentOfType(type) { return sent.filter((s) => s.message.type === type).map((s) => s.message.data); },
  };
}
