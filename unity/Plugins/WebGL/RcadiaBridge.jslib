// The WebGL side of the RCADIA agent SDK for Unity: window.postMessage between the game
// (this page, framed by its host) and window.parent, for Runtime/Unity/RcadiaWebGLLink.cs.
//
// Emscripten copies each function below into the build by its source text, so a function
// may use only its arguments, browser globals, Unity's runtime (UTF8ToString, SendMessage)
// and what it names in __deps ($RcadiaBridge becomes a top-level `RcadiaBridge`).
// Nothing here closes over variables of this file.

var RcadiaBridgeLibrary = {
  // Open links: handle -> message listener. Plain data, so emscripten can copy it.
  $RcadiaBridge: { listeners: {}, nextHandle: 1 },

  // Start delivering the parent's messages to objectName.methodName(json) via SendMessage.
  // Returns a handle for RcadiaBridge_Close.
  RcadiaBridge_Open__deps: ['$RcadiaBridge'],
  RcadiaBridge_Open: function (objectNamePtr, methodNamePtr) {
    var objectName = UTF8ToString(objectNamePtr);
    var methodName = UTF8ToString(methodNamePtr);
    var listener = function (event) {
      // Only the host (our parent frame) may drive the game; anything else, for example a
      // nested ad frame or another tab, is ignored.
      if (!event || event.source !== window.parent) return;
      // Not framed, the parent is the page itself: what arrives are our own posts.
      if (window.parent === window) return;
      var msg = event.data;
      if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return;
      var json;
      try {
        json = JSON.stringify(msg);
      } catch (e) {
        return; // not representable as JSON (a cycle, a BigInt): not a protocol message
      }
      SendMessage(objectName, methodName, json);
    };
    window.addEventListener('message', listener);
    var handle = RcadiaBridge.nextHandle++;
    RcadiaBridge.listeners[handle] = listener;
    return handle;
  },

  // Post one message, given as the JSON text of { type, data }, to the parent frame.
  RcadiaBridge_Post: function (messageJsonPtr) {
    var message;
    try {
      message = JSON.parse(UTF8ToString(messageJsonPtr));
    } catch (e) {
      console.error('[RCADIA] not posted, the SDK produced text that is not JSON: ' + e);
      return;
    }
    // "*" because a sandboxed game frame has an opaque origin and cannot know its host's
    // origin; nothing the game sends is secret from its parent.
    window.parent.postMessage(message, '*');
  },

  // Stop the listener of one handle; unknown handles are ignored.
  RcadiaBridge_Close__deps: ['$RcadiaBridge'],
  RcadiaBridge_Close: function (handle) {
    var listener = RcadiaBridge.listeners[handle];
    if (!listener) return;
    window.removeEventListener('message', listener);
    delete RcadiaBridge.listeners[handle];
  },
};

mergeInto(LibraryManager.library, RcadiaBridgeLibrary);
